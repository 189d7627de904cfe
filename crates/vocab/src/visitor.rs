//! Who a customer talking to the desk is, as a chat session and the tickets
//! opened from it both show them.

use serde::Serialize;

/// The visitor of a session (and of a ticket opened from it). `externalId` is the customer's own user id
/// from a verified identity token; `verified` says the customer's backend
/// signed the identity (name and email included).
#[derive(Debug, Clone, Default, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Visitor {
    #[sqlx(rename = "visitor_external_id")]
    pub external_id: Option<String>,
    #[sqlx(rename = "visitor_email")]
    pub email: Option<String>,
    #[sqlx(rename = "visitor_name")]
    pub name: String,
    #[sqlx(rename = "visitor_verified")]
    pub verified: bool,
}

/// Who a new ticket or chat session is from, as the contacts that match
/// them read it: a verified widget identity (`external_id`), an email and
/// whether it was proven, a name to give a new contact.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Person {
    /// Only a verified identity: an unverified id is anyone's claim.
    pub external_id: Option<String>,
    pub email: Option<String>,
    /// False for an email a visitor typed and has not confirmed.
    pub email_verified: bool,
    pub name: Option<String>,
}

impl Person {
    /// Nothing to match a contact by.
    pub fn is_unknown(&self) -> bool {
        self.external_id.is_none() && self.email.is_none()
    }
}
