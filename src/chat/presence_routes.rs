//! The REST routes of agents being there: an agent's heartbeat, who is
//! online, taking an agent offline (`chat::service` keeps the presence),
//! and the token a browser's socket opens with.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa_axum::routes;

use super::{ChatDeps, service};
use crate::auth::{Principal, Scope};
use crate::error::ApiResult;
use crate::extract::{Id, Json};
use crate::idempotency::RequestState;
use crate::openapi::schema::{DataList, ErrorBody, Removed};
use crate::realtime::Realtime;
use crate::realtime::presence::{AgentPresence, Visibility};
use crate::realtime::token::Minter;
use crate::router::ApiRouter;
use crate::time::Timestamp;
use crate::validate::{
    Fields, NAME_MAX, optional_email, optional_enum, optional_text, required_id,
};

fn visibility() -> utoipa::openapi::ObjectBuilder {
    crate::openapi::schema::enum_of(Visibility::NAMES)
}

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::ChatWrite, routes!(heartbeat))
        .route(Scope::ChatRead, routes!(list_presence))
        .route(Scope::ChatWrite, routes!(remove_presence))
        .route(Scope::ChatRead, routes!(socket_token))
}

/// How long a socket token may wait before it opens a socket.
pub const SOCKET_TOKEN_TTL: Duration = Duration::from_secs(60);

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = AgentHeartbeat)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HeartbeatBody {
    #[schema(value_type = uuid::Uuid, required)]
    user_id: Option<String>,
    #[schema(max_length = 255)]
    name: Option<String>,
    #[schema(format = Email, max_length = 255)]
    email: Option<String>,
    #[schema(schema_with = crate::users::model::role_schema)]
    role: Option<String>,
    #[schema(schema_with = visibility)]
    visibility: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HeartbeatReply {
    online: bool,
    last_seen: Timestamp,
}

/// Agent heartbeat
///
/// Marks the agent online for the presence TTL. A `userId` that is not a
/// user of the company registers one (an AGENT) from `name` and `email`;
/// an id that cannot be registered is 400 on `userId`.
#[utoipa::path(post, path = "/chat/agent-presence", tag = "Chat",
    request_body = HeartbeatBody,
    responses(
        (status = 200, description = "Online", body = HeartbeatReply),
        (
            status = 409,
            description = "The email belongs to another user of the company",
            body = ErrorBody,
        ),
    ))]
async fn heartbeat(
    RequestState(state): RequestState,
    principal: Principal,
    Json(body): Json<HeartbeatBody>,
) -> ApiResult<Json<HeartbeatReply>> {
    let (user_id, name, email, role, visibility) = (
        required_id("userId", body.user_id.as_deref()),
        optional_text("name", body.name.as_deref(), NAME_MAX),
        // Stored lower case, as `/users` stores them.
        optional_email("email", body.email.as_deref()).map(|e| e.map(|e| e.to_lowercase())),
        optional_enum("role", body.role.as_deref()),
        optional_enum("visibility", body.visibility.as_deref()),
    )
        .all_valid()?;
    let beat = service::Heartbeat {
        user_id,
        name,
        email,
        role,
        visibility: visibility.unwrap_or(Visibility::Public),
    };
    let record = service::heartbeat(
        &ChatDeps::from_ref(&state),
        &principal.actor(),
        &principal.tenant,
        beat,
    )
    .await?;
    Ok(Json(HeartbeatReply {
        online: true,
        last_seen: record.last_seen,
    }))
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OnlineAgent {
    #[serde(flatten)]
    agent: AgentPresence,
    online: bool,
}

/// Agents online
#[utoipa::path(get, path = "/chat/agent-presence", tag = "Chat",
    responses((status = 200, description = "Online agents", body = DataList<OnlineAgent>)))]
async fn list_presence(
    State(realtime): State<Arc<Realtime>>,
    principal: Principal,
) -> ApiResult<Json<serde_json::Value>> {
    let agents: Vec<OnlineAgent> = realtime
        .presence
        .online(&principal.tenant)
        .await?
        .into_iter()
        .map(|agent| OnlineAgent {
            agent,
            online: true,
        })
        .collect();
    Ok(Json(serde_json::json!({ "data": agents })))
}

/// Take an agent offline
#[utoipa::path(delete, path = "/chat/agent-presence/{userId}", tag = "Chat",
    params(("userId" = uuid::Uuid, Path, description = "The agent's user id")),
    responses((status = 200, description = "Removed", body = Removed)))]
async fn remove_presence(
    State(chat): State<ChatDeps>,
    principal: Principal,
    Id(user_id): Id,
) -> ApiResult<Json<serde_json::Value>> {
    let removed = service::remove_presence(&chat, &principal.tenant, user_id).await?;
    Ok(Json(serde_json::json!({ "removed": removed })))
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SocketToken {
    token: String,
    expires_at: Timestamp,
}

/// A socket token
///
/// A short-lived token for a browser's socket (`/api/v1/ws?token=…`),
/// carrying this key's (or signed-in agent's session's) tenant and scopes.
#[utoipa::path(post, path = "/ws/tokens", tag = "Chat",
    responses((status = 201, description = "Created", body = SocketToken)))]
async fn socket_token(
    RequestState(state): RequestState,
    principal: Principal,
) -> ApiResult<(StatusCode, Json<SocketToken>)> {
    let expires_at = state.clock.now().plus(SOCKET_TOKEN_TTL);
    let key = state.realtime.token_key(&state.db).await?;
    // A session's principal carries the user's id where a key's id goes:
    // its token names the session, which the handshake looks up as such.
    let minter = match &principal.agent {
        Some(agent) => Minter::Session(agent.session_id),
        None => Minter::Key(principal.key_id),
    };
    let token = key.socket_token(&principal.tenant, minter, &principal.scopes, expires_at);
    Ok((StatusCode::CREATED, Json(SocketToken { token, expires_at })))
}
