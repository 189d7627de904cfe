//! How a visitor is asked for a rating: a `rating_requested` frame on the
//! chat's own channel (the widget shows its rating card), or a signed link
//! in an email (tickets).

use uuid::Uuid;

use super::links::RatingLinks;
use super::model::{CsatMode, RatingTarget};
use super::store;
use crate::auth::Tenant;
use crate::chat::Session;
use crate::db::Db;
use crate::error::StoreError;
use crate::realtime::Realtime;
use crate::time::Timestamp;

/// The socket frame that asks a chat's visitor for a rating.
pub const RATING_REQUESTED: &str = "rating_requested";

/// Pushes `rating_requested` to the chat's own channel (its visitor).
pub async fn ask_in_chat(realtime: &Realtime, tenant: &Tenant, session_id: Uuid) {
    let data = serde_json::json!({ "chatSessionId": session_id });
    realtime
        .publish_to_session(*tenant, session_id, RATING_REQUESTED, None, &data, &data)
        .await;
}

/// A chat was just closed: in `auto` mode its visitor is asked at once.
/// A failure to read the setting is logged: the close has committed.
pub async fn chat_closed(db: &Db, realtime: &Realtime, tenant: &Tenant, session: &Session) {
    match store::mode_of(db, tenant.company_id, session.entity_id).await {
        Ok(CsatMode::Auto) => ask_in_chat(realtime, tenant, session.id).await,
        Ok(_) => {}
        Err(err) => tracing::warn!(error = %err, session = %session.id, "csat setting unread"),
    }
}

/// The signed rating link of a ticket, as of `now`, for its emails; it
/// starts with `public_url`.
pub async fn ticket_link(
    db: &Db,
    public_url: &str,
    now: Timestamp,
    ticket_id: Uuid,
) -> Result<String, StoreError> {
    let links = RatingLinks::load(db).await?;
    Ok(links.url(public_url, RatingTarget::Ticket(ticket_id), now))
}
