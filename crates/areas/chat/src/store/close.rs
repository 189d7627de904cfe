//! A chat session's close: its row, and the `chat.closed` event that is
//! also the change feed's entry for the session (so the automations'
//! triggers, which read the feed, see every close once, whoever made it).

use serde::Serialize;
use uuid::Uuid;

use super::load_session;
use crate::auth::Tenant;
use crate::db::{Backend, Query, Tx};
use crate::error::StoreError;
use crate::events::{self, EventName, EventPayload};
use crate::model::{Session, SessionStatus};
use crate::time::Timestamp;

/// `chat.closed`: the session as it is once closed.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct ChatClosed<'a>(pub &'a Session);

impl EventPayload for ChatClosed<'_> {
    const NAME: EventName = EventName::ChatClosed;
}

/// Closes session `id` in `tx` as the transaction's actor, at `now`: its
/// status, `closedAt`, version and `chat.closed`. None when it was closed
/// already (nothing changes). Made for a change that starts elsewhere
/// (an automation's `close_chat`), whose caller, once it commits, does
/// what a close owes the sockets, the queues and the rating request.
pub async fn close_in(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    now: Timestamp,
) -> Result<Option<Session>, StoreError> {
    let lock = match tx.backend() {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    let current = load_session(&mut *tx, tenant, id, lock).await?;
    if current.status == SessionStatus::Closed {
        return Ok(None);
    }
    Query::new(
        "UPDATE chat_sessions SET status = $4, closed_at = $5, updated_at = $5, \
         version = version + 1 WHERE id = $1 AND company_id = $2 AND mode = $3",
    )
    .bind(id)
    .bind_tenant(tenant)
    .bind(SessionStatus::Closed)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    record_closed(tx, tenant, id, now).await.map(Some)
}

/// The session as `tx` now holds it, just closed: `chat.closed` with it,
/// which is the feed's entry for the change, at `now`.
pub(super) async fn record_closed(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    now: Timestamp,
) -> Result<Session, StoreError> {
    let (session, change) = super::session_as_recorded(tx, tenant, id).await?;
    events::emit_change(tx, tenant, &ChatClosed(&session), Some(&change), now).await?;
    Ok(session)
}
