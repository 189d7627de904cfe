//! What a socket of an agent limited to their teams may subscribe to (see
//! docs/websocket.md and docs/api.md, "Roles").

use axum::http::StatusCode;
use uuid::Uuid;

use crate::error::{ApiError, ErrorCode};
use crate::realtime::protocol::Channel;

/// What an agent limited to their teams may subscribe to, before the
/// checks every agent gets: the session channels (the store then finds
/// only their teams' sessions: 404 for any other, as another company's),
/// presence, their own agent channel and one ticket's viewers (the store
/// then finds only their teams' tickets). The entity and ticket channels
/// carry every team's chats and tickets, so they are refused.
pub(super) fn reads(channel: Channel, member: Uuid) -> Result<(), ApiError> {
    match channel {
        Channel::Session(_) | Channel::Presence | Channel::Ticket(_) => Ok(()),
        Channel::Agent(user) if user == member => Ok(()),
        Channel::Agent(_) => Err(ApiError::not_found()),
        Channel::Entity(_) | Channel::Tickets(_) => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            ErrorCode::InsufficientScope,
            "An agent limited to their teams reads the session channels of their teams' \
             chats, their own agent channel and presence",
        )),
    }
}
