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
