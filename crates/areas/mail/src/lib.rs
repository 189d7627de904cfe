//! Email to visitors, queued: an email is an outbox job written in the same
//! transaction as the change that causes it. Sending it (SMTP or `.eml`
//! files) is the service's job handler. An area crate: it depends on the
//! floors below only.

use serde::{Deserialize, Serialize};

use store::Tx;
use vocab::error::StoreError;
use vocab::tenant::Tenant;

/// The outbox job kind that sends one email.
pub const JOB_KIND: &str = "email";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Email {
    pub to: String,
    pub subject: String,
    /// The plain-text part (always sent).
    pub text: String,
    /// An HTML alternative, sent beside the text when given.
    pub html: Option<String>,
}

/// Queues `email` for sending once `tx` commits.
pub async fn queue(tx: &mut Tx, tenant: &Tenant, email: &Email) -> Result<(), StoreError> {
    infra::outbox::enqueue(tx, JOB_KIND, Some(tenant), email).await?;
    Ok(())
}
