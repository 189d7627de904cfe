//! Sending a chat message over REST (`POST /chat/sessions/{id}/messages`);
//! the socket's `message` frame goes through the same `chat::service`.

use axum::extract::FromRef;
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa_axum::routes;

use super::model::{Message, MessageInput, OutgoingMessage, SenderTypeInput, sender_type};
use super::{ChatDeps, service};
use crate::auth::{Principal, Scope};
use crate::error::ApiResult;
use crate::extract::{Id, Json};
use crate::idempotency::RequestState;
use crate::openapi::schema::ErrorBody;
use crate::router::ApiRouter;
use crate::versions::IfMatch;

pub fn router() -> ApiRouter {
    ApiRouter::new().route(Scope::ChatWrite, routes!(send_message))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SendMessage {
    #[schema(value_type = String, required, min_length = 1, max_length = 10000)]
    body: Option<String>,
    #[schema(schema_with = sender_type, required)]
    sender_type: Option<String>,
    /// A user of the company; required for a company key's `agent`
    /// messages. An agent (signed in, or by their personal key) sends as
    /// themselves: their own id or none; another agent's is refused.
    #[schema(value_type = Option<uuid::Uuid>)]
    sender_id: Option<String>,
    /// The sender's own id for this message (e.g. a UUID): sending again
    /// with the same id in the same session returns the first message and
    /// stores nothing.
    #[schema(value_type = String, min_length = 1, max_length = 100)]
    client_message_id: Option<String>,
    /// Up to 10 unattached uploads of the company and mode to attach.
    #[schema(value_type = Option<Vec<uuid::Uuid>>)]
    attachment_ids: Option<serde_json::Value>,
}

/// Send a message
///
/// Pushed to the session's sockets; 409 `session_closed` on a closed session.
/// A repeat of a `clientMessageId` answers 200 with the message first sent.
/// With `If-Match` on a version the session is no longer at, nothing is
/// sent: 412 `version_conflict`.
#[utoipa::path(post, path = "/chat/sessions/{id}/messages", tag = "Chat",
    request_body = SendMessage,
    params(("id" = uuid::Uuid, Path, description = "Session id"),
        ("If-Match" = Option<String>, Header, description = "The session's version the change is based on (its `ETag`, `\"<version>\"`): when the session is at another version now, nothing changes and the answer is 412 `version_conflict` with `currentVersion`. `*` or no header: any version.")),
    responses(
        (status = 201, description = "Sent", body = Message),
        (status = 200, description = "Sent before with this clientMessageId", body = Message),
        (status = 409, description = "The session is closed", body = ErrorBody),
        (status = 412, description = "`version_conflict`: the session is no longer at the version `If-Match` named; nothing changed. `currentVersion` is its version now.", body = ErrorBody),
    ))]
async fn send_message(
    RequestState(state): RequestState,
    principal: Principal,
    Id(id): Id,
    IfMatch(expected): IfMatch,
    Json(body): Json<SendMessage>,
) -> ApiResult<(StatusCode, Json<Message>)> {
    // An agent's own message needs no senderId: it is theirs.
    let own = match body.sender_type.as_deref() {
        Some("agent") => principal.acting_user().map(|id| id.to_string()),
        _ => None,
    };
    let mut outgoing = OutgoingMessage::parse(MessageInput {
        body: body.body.as_deref(),
        sender_type: SenderTypeInput::Named(body.sender_type.as_deref()),
        sender_id: body.sender_id.as_deref().or(own.as_deref()),
        client_message_id: body.client_message_id.as_deref(),
        attachment_ids: body.attachment_ids.as_ref(),
    })?;
    outgoing.expected_version = expected;
    let sent = service::send_message(
        &ChatDeps::from_ref(&state),
        &principal.actor(),
        &principal.tenant,
        id,
        outgoing,
    )
    .await?;
    let status = if sent.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(sent.message)))
}
