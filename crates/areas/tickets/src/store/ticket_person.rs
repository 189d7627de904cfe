//! Who a new ticket is from: the email given with it, or the visitor of the
//! chat it is made from, as the contacts step matches them.

use uuid::Uuid;

use crate::auth::Tenant;
use crate::db::{Query, Tx};
use crate::error::StoreError;
use vocab::visitor::Person;

/// Who a ticket is from, for its contact: the email given, or its chat's
/// visitor (a verified identity, the chat's email and whether it was
/// proven). An email given with the ticket counts as proven: the key's
/// holder wrote it.
pub(super) fn person_of(given_email: Option<&str>, chat: Option<&ChatVisitor>) -> Person {
    match chat {
        Some(chat) => Person {
            external_id: chat
                .visitor_external_id
                .clone()
                .filter(|_| chat.visitor_verified),
            email: given_email
                .map(str::to_owned)
                .or_else(|| chat.visitor_email.clone()),
            email_verified: given_email.is_some() || chat.email_verified,
            name: Some(chat.visitor_name.clone()),
        },
        None => Person {
            email: given_email.map(str::to_owned),
            email_verified: true,
            ..Person::default()
        },
    }
}

/// The visitor of a chat session a ticket is made from.
#[derive(sqlx::FromRow)]
pub(super) struct ChatVisitor {
    pub(super) contact_id: Option<Uuid>,
    pub(super) visitor_external_id: Option<String>,
    pub(super) visitor_email: Option<String>,
    pub(super) visitor_name: String,
    pub(super) visitor_verified: bool,
    pub(super) email_verified: bool,
}

/// The visitor of the tenant's chat session `id`; another tenant's (or no)
/// session is a 400 on `chatSessionId`.
pub(super) async fn chat_visitor(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
) -> Result<ChatVisitor, StoreError> {
    let found: Option<ChatVisitor> = Query::new(
        "SELECT s.contact_id, s.visitor_external_id, s.visitor_email, s.visitor_name, s.visitor_verified, \
         s.email_verified FROM chat_sessions s WHERE s.id = ",
    )
    .push_bind(id)
    .push(" AND ")
    .push_tenant_in_teams(tenant, "s", "team_id")
    .fetch_optional(tx)
    .await?;
    found.ok_or_else(|| StoreError::InvalidReference {
        field: "chatSessionId".into(),
        message: "must be a chat session of the key's company and mode".into(),
    })
}
