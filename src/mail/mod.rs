//! Email to visitors. Messages are queued as outbox jobs (same transaction
//! as the change that causes them) and sent by [`EmailJob`]: over SMTP when
//! `SMTP_URL` is set, else as `.eml` files under `data/mail/`. Failed sends
//! are retried on the outbox's one schedule.

mod job;
pub mod mailer;

use serde::{Deserialize, Serialize};

use crate::auth::Tenant;
use crate::db::Tx;
use crate::error::StoreError;

pub use job::EmailJob;
pub use mailer::Mailer;

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
    crate::outbox::enqueue(tx, JOB_KIND, Some(tenant), email).await?;
    Ok(())
}
