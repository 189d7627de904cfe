//! SQL for chat sessions and messages. Every query filters on the tenant
//! (company and mode). Sending a message locks its session row (an UPDATE),
//! so a message never lands in a session that a concurrent close has closed.
//! A message with a `clientMessageId` is stored once per session: the
//! unique index (session, client message id) decides between racing sends.
//!
//! Here are the columns and the reads the other parts share; `create`
//! creates a session, `read` reads sessions and messages, `update` changes
//! a session, `send` adds a message, and `delete` deletes closed
//! sessions.

mod close;
mod contacts;
mod create;
mod delete;
pub mod erase;
mod read;
mod send;
mod update;

pub use close::{ChatClosed, close_in};
pub use contacts::{ContactOf, SessionSummary, move_contact, of_contacts};
pub use create::{ChatStarted, create_session};
pub use delete::delete_sessions;
pub use read::{
    ReplayScope, find_session, list_sessions, messages, messages_after, visitor_sessions,
};
pub use send::{AgentReply, AnsweredTickets, SendError, Sent, create_message};
pub use update::{confirm_visitor_email, retag_in, update_session};

use uuid::Uuid;

use super::model::{Message, Session};
use crate::attachments::links::Signer;
use crate::attachments::store::{self as attachment_store, Kind};
use crate::auth::Tenant;
use crate::db::{Db, On, Query, Tx};
use crate::error::StoreError;
use crate::events;
use crate::events::{RecordChange, RecordType};
use crate::tags::store::{self as tag_store, Tagged};
use crate::time::Timestamp;

const SESSION_COLUMNS: &str = "id, entity_id, status, visitor_name, visitor_email, created_at, \
     updated_at, closed_at, custom_fields, team_id, assignee_id, assigned_at, \
     visitor_external_id, visitor_verified, email_verified, version, contact_id";

/// Messages with the agent's name (the join only matches agent messages).
const MESSAGE_SELECT: &str = "SELECT m.id, m.session_id, m.body, m.sender_type, m.sender_id, \
     u.name AS sender_name, m.client_message_id, m.created_at FROM chat_messages m \
     LEFT JOIN users u ON m.sender_type = 'agent' AND u.id = m.sender_id \
     AND u.company_id = m.company_id";

/// The session with its tags, on the pool or in a transaction; `suffix`
/// ends the row query (a lock).
async fn load_session<'c>(
    on: impl Into<On<'c>>,
    tenant: &Tenant,
    id: Uuid,
    suffix: &str,
) -> Result<Session, StoreError> {
    let mut on = on.into();
    // In the tenant's teams when it is limited to them: a session outside
    // them is NotFound to every read and change that loads it here.
    let mut session: Session = Query::new(format!(
        "SELECT {SESSION_COLUMNS} FROM chat_sessions WHERE id = $1 AND company_id = $2 AND mode = $3"
    ))
    .bind(id)
    .bind_tenant(tenant)
    .push_teams(tenant, "team_id")
    .push(suffix)
    .fetch_one(on.reborrow())
    .await?;
    session.tags = tag_store::of(on, Tagged::ChatSession, id).await?;
    Ok(session)
}

/// Session `id` as `tx` holds it, for a step of another area's
/// transaction (an automation's conditions on a chat that started).
pub async fn session_in(tx: &mut Tx, tenant: &Tenant, id: Uuid) -> Result<Session, StoreError> {
    load_session(&mut *tx, tenant, id, "").await
}

/// The session as `tx` now holds it, recorded for the change feed at `now`.
pub async fn record_session(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    now: Timestamp,
) -> Result<Session, StoreError> {
    let (session, change) = session_as_recorded(tx, tenant, id).await?;
    events::record_change(tx, tenant, &change, now).await?;
    Ok(session)
}

/// The session as `tx` now holds it and its change feed entry. The change
/// was the caller's to make (its own read found the session): the feed
/// records the session as it now is, whichever team it is in.
pub(super) async fn session_as_recorded(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
) -> Result<(Session, RecordChange), StoreError> {
    let session = load_session(&mut *tx, &tenant.whole(), id, "").await?;
    let change = RecordChange::upsert(RecordType::ChatSession, id, &session)?;
    Ok((session, change))
}

/// The change feed's entry of session `id` as `tx` holds it, for an event
/// of another area that is the entry (a rating's `csat.submitted`).
pub async fn session_change(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
) -> Result<RecordChange, StoreError> {
    Ok(session_as_recorded(tx, tenant, id).await?.1)
}

/// The messages with their attachments (one query for all), with links
/// from `signer`.
async fn with_attachments(
    db: &Db,
    messages: Vec<Message>,
    signer: &Signer,
) -> Result<Vec<Message>, StoreError> {
    let ids: Vec<Uuid> = messages.iter().map(|message| message.id).collect();
    let mut files = attachment_store::of_each(db, Kind::Message, &ids, signer).await?;
    Ok(messages
        .into_iter()
        .map(|message| Message {
            attachments: files.remove(&message.id).unwrap_or_default(),
            ..message
        })
        .collect())
}
