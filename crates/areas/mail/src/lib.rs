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

/// The outbox job kind that sends one reply of an email ticket.
pub const REPLY_JOB_KIND: &str = "email_reply";

/// An agent's reply to an email ticket: an email with the headers that
/// thread it in the customer's mail client, from the channel's address.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Reply {
    /// The channel's address (the sender).
    pub from: String,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    /// The address replies come back to (the channel's, with the ticket's
    /// reply token).
    pub reply_to: String,
    pub subject: String,
    pub text: String,
    /// This message's id, without angle brackets (recorded beforehand, so
    /// the customer's answer threads).
    pub message_id: String,
    pub in_reply_to: Option<String>,
    pub references: Vec<String>,
    /// The reply's files, read from the attachments' storage when the
    /// email is sent (a job queued before replies carried files has none).
    #[serde(default)]
    pub attachments: Vec<ReplyFile>,
    /// The channel it leaves by, whose DKIM key (if any) signs it when it
    /// is sent (a job queued before replies carried it is sent unsigned).
    #[serde(default)]
    pub channel_id: Option<uuid::Uuid>,
}

/// A file of a reply: its name and type as the customer sees them, and
/// where its bytes are (the company's object of that SHA-256).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ReplyFile {
    pub filename: String,
    pub content_type: String,
    pub company_id: uuid::Uuid,
    pub sha256: String,
}

/// Queues `reply` for sending once `tx` commits.
pub async fn queue_reply(tx: &mut Tx, tenant: &Tenant, reply: &Reply) -> Result<(), StoreError> {
    infra::outbox::enqueue(tx, REPLY_JOB_KIND, Some(tenant), reply).await?;
    Ok(())
}
