//! Operations of chat sessions, messages, agent presence and socket tokens.
//! The socket itself (`GET /api/v1/ws`) is described in docs/websocket.md.
#![allow(dead_code)]

use utoipa::OpenApi;

use super::schema::DataList;
use crate::chat::model::{Message, Session};
use crate::chat::routes::{
    CreateSession, CreatedSession, HeartbeatBody, HeartbeatReply, OnlineAgent, SendMessage,
    SessionWithMessages, SocketToken, UpdateSession,
};
use crate::validate::{PageQuery, Paged};

#[derive(OpenApi)]
#[openapi(paths(
    create_session,
    list_sessions,
    get_session,
    update_session,
    send_message,
    heartbeat,
    list_presence,
    remove_presence,
    socket_token,
))]
pub struct Doc;

/// The answer to a presence removal.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Removed {
    /// Whether the agent was online.
    pub removed: bool,
}

/// Start a chat session
///
/// Returns the visitor's token (for the widget's socket) once.
#[utoipa::path(post, path = "/api/v1/chat/sessions", tag = "Chat", request_body = CreateSession,
    responses((status = 201, description = "Created", body = CreatedSession)))]
fn create_session() {}

/// List chat sessions
#[utoipa::path(get, path = "/api/v1/chat/sessions", tag = "Chat",
    params(
        ("entityId" = Option<uuid::Uuid>, Query, description = "Only this entity's sessions"),
        ("status" = Option<String>, Query, description = "ACTIVE or CLOSED"),
        PageQuery,
    ),
    responses((status = 200, description = "A page of sessions", body = Paged<Session>)))]
fn list_sessions() {}

/// Get a chat session with its messages
#[utoipa::path(get, path = "/api/v1/chat/sessions/{id}", tag = "Chat",
    params(("id" = uuid::Uuid, Path, description = "Session id")),
    responses((status = 200, description = "The session and its messages", body = SessionWithMessages)))]
fn get_session() {}

/// Close or reopen a chat session
#[utoipa::path(patch, path = "/api/v1/chat/sessions/{id}", tag = "Chat",
    request_body = UpdateSession,
    params(("id" = uuid::Uuid, Path, description = "Session id")),
    responses((status = 200, description = "The session", body = Session)))]
fn update_session() {}

/// Send a message
///
/// Pushed to the session's sockets; 409 `session_closed` on a closed session.
#[utoipa::path(post, path = "/api/v1/chat/sessions/{id}/messages", tag = "Chat",
    request_body = SendMessage,
    params(("id" = uuid::Uuid, Path, description = "Session id")),
    responses(
        (status = 201, description = "Sent", body = Message),
        (status = 409, description = "The session is closed", body = super::schema::ErrorBody),
    ))]
fn send_message() {}

/// Agent heartbeat
///
/// Marks the agent online for the presence TTL. An unknown `userId`
/// creates the user (an AGENT) from `name` and `email`.
#[utoipa::path(post, path = "/api/v1/chat/agent-presence", tag = "Chat",
    request_body = HeartbeatBody,
    responses(
        (status = 200, description = "Online", body = HeartbeatReply),
        (status = 409, description = "The userId or email belongs to another user", body = super::schema::ErrorBody),
    ))]
fn heartbeat() {}

/// Agents online
#[utoipa::path(get, path = "/api/v1/chat/agent-presence", tag = "Chat",
    responses((status = 200, description = "Online agents", body = DataList<OnlineAgent>)))]
fn list_presence() {}

/// Take an agent offline
#[utoipa::path(delete, path = "/api/v1/chat/agent-presence/{userId}", tag = "Chat",
    params(("userId" = uuid::Uuid, Path, description = "The agent's user id")),
    responses((status = 200, description = "Removed", body = Removed)))]
fn remove_presence() {}

/// A socket token
///
/// A short-lived token for a browser's socket (`/api/v1/ws?token=…`),
/// carrying this key's tenant and scopes.
#[utoipa::path(post, path = "/api/v1/ws/tokens", tag = "Chat",
    responses((status = 201, description = "Created", body = SocketToken)))]
fn socket_token() {}
