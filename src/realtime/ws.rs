//! `GET /api/v1/ws`: the socket of agent consoles and visitor widgets
//! (protocol in docs/websocket.md).
//!
//! It is mounted beside the `/api/v1` router rather than in it (see
//! `realtime::public_routes`): the router's scope layer refuses any request
//! without a `Principal`, and a browser authenticates with `?token=`, not a
//! key. So this handler authenticates both ways itself: `X-API-Key` through
//! the same `principal_for` as the middleware (and requires `chat:read`), or
//! a visitor or socket token.
//!
//! One task per socket, no split halves: it reads client frames, writes the
//! frames its hub queue receives, pings when idle, and stops on a dead peer,
//! a queue overflow (close 1013) or shutdown (close 1001).

use std::collections::HashSet;
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use super::hub::{Connection, Frame, KickSignal};
use super::protocol::{self, Channel, ClientFrame, HubChannel, Topic};
use super::token::TokenGrant;
use crate::app::AppState;
use crate::auth::middleware::{API_KEY_HEADER, principal_for};
use crate::auth::{Scope, Tenant};
use crate::chat::routes::message_body;
use crate::chat::{service, store};
use crate::error::{ApiError, StoreError};
use crate::extract::Query;
use crate::validate::Validator;

/// Buffers per socket (CRATES.md: defaults cost ~135 KiB per idle socket).
const READ_BUFFER: usize = 4096;
const WRITE_BUFFER: usize = 4096;
/// Largest client frame: a 10 000-character message and its JSON.
const MAX_MESSAGE: usize = 64 * 1024;
/// Must hold the write buffer plus the largest frame we send.
const MAX_WRITE_BUFFER: usize = 256 * 1024;
/// A socket silent this long is pinged; silent for `DEAD_AFTER`, dropped.
pub const PING_INTERVAL: Duration = Duration::from_secs(25);
pub const DEAD_AFTER: Duration = Duration::from_secs(60);
/// A write that takes longer than this means the peer stopped reading.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// Channels one socket may hold.
pub const MAX_SUBSCRIPTIONS: usize = 100;
/// Messages replayed per store query (replay loops until it has them all).
const REPLAY_BATCH: i64 = 200;
/// How long a replayed message's live copy is watched for (and dropped).
const REPLAY_DEDUPE: Duration = Duration::from_secs(30);
/// Typing events per session per socket are passed on at most this often.
const TYPING_INTERVAL: Duration = Duration::from_millis(500);

/// Who is on the socket.
#[derive(Debug, Clone)]
pub enum Credential {
    /// An API key or socket token with `chat:read` (`can_write`: `chat:write`).
    Agent { tenant: Tenant, can_write: bool },
    /// A visitor token: one session.
    Visitor {
        tenant: Tenant,
        session_id: Uuid,
        entity_id: Uuid,
    },
}

impl Credential {
    fn tenant(&self) -> Tenant {
        match self {
            Credential::Agent { tenant, .. } | Credential::Visitor { tenant, .. } => *tenant,
        }
    }

    fn is_visitor(&self) -> bool {
        matches!(self, Credential::Visitor { .. })
    }
}

#[derive(Deserialize)]
pub struct WsQuery {
    token: Option<String>,
}

fn unauthorized(code: &'static str, message: &str) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, code, message)
}

/// The handshake: authenticate (401/403 with the REST error body), then
/// upgrade with small buffers.
pub async fn handler(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<WsQuery>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let credential = match authenticate(&state, &headers, query.token.as_deref()).await {
        Ok(credential) => credential,
        Err(error) => return error.into_response(),
    };
    let Ok(upgrade) = upgrade else {
        return ApiError::new(
            StatusCode::UPGRADE_REQUIRED,
            "upgrade_required",
            "This endpoint needs a WebSocket upgrade",
        )
        .into_response();
    };
    upgrade
        .read_buffer_size(READ_BUFFER)
        .write_buffer_size(WRITE_BUFFER)
        .max_write_buffer_size(MAX_WRITE_BUFFER)
        .max_message_size(MAX_MESSAGE)
        .max_frame_size(MAX_MESSAGE)
        .on_upgrade(move |ws| run(state, credential, ws))
}

/// Resolves the handshake's credentials: a key header wins over a token.
pub async fn authenticate(
    state: &AppState,
    headers: &HeaderMap,
    token: Option<&str>,
) -> Result<Credential, ApiError> {
    let token = token.map(str::trim).filter(|t| !t.is_empty());
    let Some(token) = token.filter(|_| !headers.contains_key(API_KEY_HEADER)) else {
        let principal = principal_for(state, headers.get(API_KEY_HEADER)).await?;
        if !principal.scopes.contains(Scope::ChatRead) {
            return Err(ApiError::forbidden_scope(Scope::ChatRead.as_str()));
        }
        return Ok(Credential::Agent {
            tenant: principal.tenant,
            can_write: principal.scopes.contains(Scope::ChatWrite),
        });
    };
    let key = state.realtime.token_key(&state.db).await?;
    let credential = match key.verify(token) {
        Some(TokenGrant::Visitor { tenant, session_id }) => {
            let session = match store::find_session(&state.db, &tenant, session_id).await {
                Ok(session) => session,
                Err(StoreError::NotFound) => {
                    return Err(unauthorized("invalid_token", "Invalid token"));
                }
                Err(other) => return Err(other.into()),
            };
            Credential::Visitor {
                tenant,
                session_id,
                entity_id: session.entity_id,
            }
        }
        Some(TokenGrant::Socket {
            tenant,
            scopes,
            expires_at,
            ..
        }) => {
            if expires_at <= chrono::Utc::now().timestamp() {
                return Err(unauthorized("invalid_token", "Token has expired"));
            }
            Credential::Agent {
                tenant,
                can_write: scopes.contains(Scope::ChatWrite),
            }
        }
        None => return Err(unauthorized("invalid_token", "Invalid token")),
    };
    let company = crate::companies::store::find(&state.db, credential.tenant().company_id).await?;
    if company.status != "active" {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "account_suspended",
            "Account is suspended",
        ));
    }
    Ok(credential)
}

/// Why a socket stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// The peer left, errored, or went silent: nothing more to say.
    Gone,
    /// The queue overflowed: close with 1013.
    Kicked,
    /// The server is shutting down: close with 1001.
    Shutdown,
}

/// What woke the socket's loop.
enum Event {
    Shutdown,
    Kicked,
    Incoming(Option<Result<Message, axum::Error>>),
    Queued(Option<std::sync::Arc<Frame>>),
    Tick,
}

/// Resolves once shutdown has begun.
pub(crate) async fn stopping(shutdown: &mut tokio::sync::watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await;
}

/// A client frame's failure: an error frame, or the end of the socket.
enum Fail {
    Api(ApiError),
    Stop(Stop),
}

impl From<ApiError> for Fail {
    fn from(err: ApiError) -> Self {
        Fail::Api(err)
    }
}

impl From<StoreError> for Fail {
    fn from(err: StoreError) -> Self {
        Fail::Api(err.into())
    }
}

impl From<Stop> for Fail {
    fn from(stop: Stop) -> Self {
        Fail::Stop(stop)
    }
}

struct Socket {
    state: AppState,
    credential: Credential,
    ws: WebSocket,
    conn: Connection,
    kick: KickSignal,
    shutdown: tokio::sync::watch::Receiver<bool>,
    /// Messages this socket replayed, whose live copies it drops.
    replayed: Option<(Instant, HashSet<(HubChannel, Uuid)>)>,
    /// Session → entity of sessions an agent socket has touched.
    sessions: Vec<(Uuid, Uuid)>,
    last_typing: Option<(Uuid, Instant)>,
}

async fn run(state: AppState, credential: Credential, ws: WebSocket) {
    let conn = state.realtime.hub.connect();
    let mut socket = Socket {
        kick: conn.kick_signal(),
        shutdown: state.shutdown.clone(),
        state,
        credential,
        ws,
        conn,
        replayed: None,
        sessions: Vec::new(),
        last_typing: None,
    };
    let stop = socket.serve().await;
    // Unsubscribe and drop queued frames at once, then say goodbye.
    socket.conn.release();
    let close = match stop {
        Stop::Gone => None,
        Stop::Kicked => Some((1013, "Too slow: the socket's queue overflowed")),
        Stop::Shutdown => Some((1001, "Server is shutting down")),
    };
    if let Some((code, reason)) = close {
        let frame = Message::Close(Some(CloseFrame {
            code,
            reason: reason.into(),
        }));
        let _ = tokio::time::timeout(CLOSE_TIMEOUT, socket.ws.send(frame)).await;
    }
}

impl Socket {
    async fn serve(&mut self) -> Stop {
        let mut last_heard = Instant::now();
        let start = tokio::time::Instant::now() + PING_INTERVAL;
        let mut ticker = tokio::time::interval_at(start, PING_INTERVAL);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let event = tokio::select! {
                biased;
                _ = stopping(&mut self.shutdown) => Event::Shutdown,
                _ = self.kick.wait() => Event::Kicked,
                incoming = self.ws.recv() => Event::Incoming(incoming),
                frame = self.conn.recv() => Event::Queued(frame),
                _ = ticker.tick() => Event::Tick,
            };
            let outcome = match event {
                Event::Shutdown => Err(Stop::Shutdown),
                Event::Kicked => Err(Stop::Kicked),
                Event::Incoming(incoming) => {
                    last_heard = Instant::now();
                    match incoming {
                        Some(Ok(Message::Text(text))) => self.on_text(&text).await,
                        Some(Ok(Message::Binary(_))) => {
                            let frame =
                                protocol::error(None, "invalid_json", "Frames must be JSON text");
                            self.send_text(frame).await
                        }
                        Some(Ok(Message::Close(_))) | Some(Err(_)) | None => Err(Stop::Gone),
                        Some(Ok(_)) => Ok(()), // ping (answered by the library) or pong
                    }
                }
                Event::Queued(Some(frame)) => self.forward(&frame).await,
                Event::Queued(None) => Err(Stop::Gone),
                Event::Tick => {
                    let silent = last_heard.elapsed();
                    if silent >= DEAD_AFTER {
                        Err(Stop::Gone)
                    } else if silent >= PING_INTERVAL {
                        self.send(Message::Ping(Default::default())).await
                    } else {
                        Ok(())
                    }
                }
            };
            if let Err(stop) = outcome {
                return stop;
            }
        }
    }

    /// Writes one frame, giving up on a peer that stopped reading, a kick,
    /// or shutdown.
    async fn send(&mut self, message: Message) -> Result<(), Stop> {
        let kick = self.kick.clone();
        tokio::select! {
            sent = tokio::time::timeout(WRITE_TIMEOUT, self.ws.send(message)) => match sent {
                Ok(Ok(())) => Ok(()),
                _ => Err(Stop::Gone),
            },
            _ = kick.wait() => Err(Stop::Kicked),
            _ = stopping(&mut self.shutdown) => Err(Stop::Shutdown),
        }
    }

    async fn send_text(&mut self, text: String) -> Result<(), Stop> {
        self.send(Message::Text(text.into())).await
    }

    /// A frame from the hub queue, unless it repeats a replayed message.
    async fn forward(&mut self, frame: &Frame) -> Result<(), Stop> {
        if let (Some(id), Some((since, replayed))) = (frame.message_id, &self.replayed) {
            if since.elapsed() > REPLAY_DEDUPE {
                self.replayed = None;
            } else if replayed.contains(&(frame.topic.channel, id)) {
                return Ok(());
            }
        }
        self.send(Message::Text(frame.text.clone())).await
    }

    async fn on_text(&mut self, text: &Utf8Bytes) -> Result<(), Stop> {
        let Ok(frame) = serde_json::from_str::<ClientFrame>(text.as_str()) else {
            let error = protocol::error(None, "invalid_json", "Frame is not valid JSON");
            return self.send_text(error).await;
        };
        let id = frame.id.clone();
        let outcome = match frame.kind.as_deref() {
            Some("subscribe") => self.subscribe(&frame, id.as_ref()).await,
            Some("unsubscribe") => self.unsubscribe(&frame, id.as_ref()).await,
            Some("message") => self.message(&frame, id.as_ref()).await,
            Some("typing") => self.typing(&frame).await,
            Some("ping") => Ok(self
                .send_text(protocol::reply("pong", None, id.as_ref()))
                .await?),
            _ => Err(ApiError::invalid_field(
                "type",
                "must be one of: subscribe, unsubscribe, message, typing, ping",
            )
            .into()),
        };
        match outcome {
            Ok(()) => Ok(()),
            Err(Fail::Stop(stop)) => Err(stop),
            Err(Fail::Api(error)) => {
                let frame = protocol::error(id.as_ref(), error.code, &error.message);
                self.send_text(frame).await
            }
        }
    }

    fn parse_channel(frame: &ClientFrame) -> Result<(Channel, &str), ApiError> {
        let Some(name) = frame.channel.as_deref() else {
            return Err(ApiError::invalid_field("channel", "is required"));
        };
        let channel = Channel::parse(name).ok_or_else(|| {
            ApiError::invalid_field("channel", "must be session:<id>, entity:<id> or presence")
        })?;
        Ok((channel, name))
    }

    fn topic(&self, channel: Channel) -> Topic {
        let hub_channel = service::hub_channel(channel, self.credential.is_visitor());
        Topic::new(self.credential.tenant(), hub_channel)
    }

    /// Whether this socket may read `channel` (404 for sessions and
    /// entities it cannot see, like REST).
    async fn authorize_read(&mut self, channel: Channel) -> Result<(), Fail> {
        match (&self.credential, channel) {
            (_, Channel::Presence) => Ok(()),
            (Credential::Visitor { session_id, .. }, Channel::Session(id)) if *session_id == id => {
                Ok(())
            }
            (Credential::Visitor { .. }, Channel::Session(_)) => Err(ApiError::not_found().into()),
            (Credential::Visitor { .. }, Channel::Entity(_)) => Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "insufficient_scope",
                "A visitor token gives its own session and presence only",
            )
            .into()),
            (Credential::Agent { .. }, Channel::Session(id)) => {
                self.entity_of(id).await?;
                Ok(())
            }
            (Credential::Agent { tenant, .. }, Channel::Entity(id)) => {
                crate::entities::store::find(&self.state.db, tenant.company_id, id).await?;
                Ok(())
            }
        }
    }

    /// The entity of session `id` (NotFound outside the tenant), cached.
    async fn entity_of(&mut self, id: Uuid) -> Result<Uuid, StoreError> {
        if let Credential::Visitor {
            session_id,
            entity_id,
            ..
        } = &self.credential
        {
            return if *session_id == id {
                Ok(*entity_id)
            } else {
                Err(StoreError::NotFound)
            };
        }
        if let Some((_, entity)) = self.sessions.iter().find(|(s, _)| *s == id) {
            return Ok(*entity);
        }
        let session = store::find_session(&self.state.db, &self.credential.tenant(), id).await?;
        if self.sessions.len() >= 32 {
            self.sessions.remove(0);
        }
        self.sessions.push((id, session.entity_id));
        Ok(session.entity_id)
    }

    async fn subscribe(&mut self, frame: &ClientFrame, id: Option<&Value>) -> Result<(), Fail> {
        let (channel, name) = Self::parse_channel(frame)?;
        let since = match frame.since.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(_) if channel == Channel::Presence => {
                return Err(ApiError::invalid_field(
                    "since",
                    "applies to session and entity channels only",
                )
                .into());
            }
            Some(raw) => Some(
                Uuid::parse_str(raw)
                    .map_err(|_| ApiError::invalid_field("since", "must be a message id"))?,
            ),
        };
        self.authorize_read(channel).await?;
        let topic = self.topic(channel);
        let fresh = !self.conn.is_subscribed(&topic);
        if fresh && self.conn.subscriptions() >= MAX_SUBSCRIPTIONS {
            return Err(ApiError::invalid_field(
                "channel",
                format!("a socket may subscribe to at most {MAX_SUBSCRIPTIONS} channels"),
            )
            .into());
        }
        // Subscribe before reading the store, so nothing falls in between.
        self.conn.subscribe(topic);
        let replay = match since {
            None => None,
            Some(since) => match self.replay_batch(channel, since).await {
                Ok(batch) => Some(batch),
                Err(err) => {
                    if fresh {
                        self.conn.unsubscribe(&topic);
                    }
                    return Err(match err {
                        StoreError::NotFound => {
                            ApiError::invalid_field("since", "must be a message of this channel")
                                .into()
                        }
                        other => other.into(),
                    });
                }
            },
        };
        self.send_text(protocol::reply("subscribed", Some(name), id))
            .await?;
        if let Some(batch) = replay {
            self.replay(channel, topic, batch).await?;
        }
        if channel == Channel::Presence {
            self.presence_snapshot().await?;
        }
        Ok(())
    }

    /// Up to `REPLAY_BATCH` messages of `channel` after `since`.
    fn replay_batch(
        &self,
        channel: Channel,
        since: Uuid,
    ) -> impl Future<Output = Result<Vec<crate::chat::Message>, StoreError>> + Send + 'static {
        let db = self.state.db.clone();
        let tenant = self.credential.tenant();
        async move {
            let scope = match channel {
                Channel::Session(id) => store::ReplayScope::Session(id),
                Channel::Entity(id) => store::ReplayScope::Entity(id),
                Channel::Presence => return Ok(Vec::new()),
            };
            store::messages_after(&db, &tenant, scope, since, REPLAY_BATCH).await
        }
    }

    /// Sends the messages after `since`, batch by batch, and remembers the
    /// last batch so their live copies (already queued) are dropped.
    async fn replay(
        &mut self,
        channel: Channel,
        topic: Topic,
        mut batch: Vec<crate::chat::Message>,
    ) -> Result<(), Fail> {
        let name = channel.name();
        loop {
            for message in &batch {
                let frame = protocol::event("chat.message", &name, None, message);
                self.send_text(frame).await?;
            }
            let (Some(last), true) = (batch.last(), batch.len() as i64 == REPLAY_BATCH) else {
                break;
            };
            let next = self.replay_batch(channel, last.id).await?;
            batch = next;
        }
        let (_, seen) = self
            .replayed
            .get_or_insert_with(|| (Instant::now(), HashSet::new()));
        seen.extend(batch.iter().map(|m| (topic.channel, m.id)));
        if let Some((since, _)) = &mut self.replayed {
            *since = Instant::now();
        }
        Ok(())
    }

    /// On subscribing to `presence`: one frame per agent online now.
    async fn presence_snapshot(&mut self) -> Result<(), Fail> {
        let visitor = self.credential.is_visitor();
        let online = self
            .state
            .realtime
            .presence
            .online(&self.credential.tenant())
            .await?;
        for agent in online.iter().filter(|a| !visitor || a.is_public()) {
            self.send_text(super::presence_frame(agent, true)).await?;
        }
        Ok(())
    }

    async fn unsubscribe(&mut self, frame: &ClientFrame, id: Option<&Value>) -> Result<(), Fail> {
        let (channel, name) = Self::parse_channel(frame)?;
        let topic = self.topic(channel);
        self.conn.unsubscribe(&topic);
        Ok(self
            .send_text(protocol::reply("unsubscribed", Some(name), id))
            .await?)
    }

    /// The session a `message` or `typing` frame is about, and who sends:
    /// a visitor in their own session, or an agent with `chat:write`.
    async fn writable_session(&mut self, frame: &ClientFrame) -> Result<(Uuid, Uuid), Fail> {
        let raw = frame.session_id.as_deref().map(str::trim);
        match &self.credential {
            Credential::Visitor {
                session_id,
                entity_id,
                ..
            } => match raw {
                None | Some("") => Ok((*session_id, *entity_id)),
                Some(raw) if Uuid::parse_str(raw).ok() == Some(*session_id) => {
                    Ok((*session_id, *entity_id))
                }
                Some(_) => Err(ApiError::not_found().into()),
            },
            Credential::Agent { can_write, .. } => {
                if !can_write {
                    return Err(ApiError::forbidden_scope(Scope::ChatWrite.as_str()).into());
                }
                let mut v = Validator::new();
                let id = v.required_uuid("sessionId", raw);
                v.finish()?;
                let id = id.unwrap_or_default();
                let entity = self.entity_of(id).await?;
                Ok((id, entity))
            }
        }
    }

    async fn message(&mut self, frame: &ClientFrame, id: Option<&Value>) -> Result<(), Fail> {
        let mut v = Validator::new();
        let body = message_body(&mut v, frame.body.as_deref());
        let (sender_type, sender_id) = if self.credential.is_visitor() {
            ("visitor", None)
        } else {
            (
                "agent",
                v.required_uuid("senderId", frame.sender_id.as_deref()),
            )
        };
        v.finish()?;
        let (session_id, _) = self.writable_session(frame).await?;
        let outgoing = service::Outgoing {
            body: body.unwrap_or_default(),
            sender_type,
            sender_id,
        };
        let tenant = self.credential.tenant();
        let message = service::send_message(&self.state, &tenant, session_id, outgoing).await?;
        let channel = Channel::Session(session_id).name();
        let reply = protocol::event("chat.message", &channel, id, &message);
        Ok(self.send_text(reply).await?)
    }

    async fn typing(&mut self, frame: &ClientFrame) -> Result<(), Fail> {
        let sender_id = if self.credential.is_visitor() {
            None
        } else {
            let mut v = Validator::new();
            let sender = v.uuid("senderId", frame.sender_id.as_deref());
            v.finish()?;
            sender
        };
        let (session_id, entity_id) = self.writable_session(frame).await?;
        if let Some((last_session, at)) = self.last_typing
            && last_session == session_id
            && at.elapsed() < TYPING_INTERVAL
        {
            return Ok(());
        }
        self.last_typing = Some((session_id, Instant::now()));
        let data = Typing {
            session_id,
            sender_type: if self.credential.is_visitor() {
                "visitor"
            } else {
                "agent"
            },
            sender_id,
        };
        let tenant = self.credential.tenant();
        for channel in [Channel::Session(session_id), Channel::Entity(entity_id)] {
            let frame = protocol::event("typing", &channel.name(), None, &data);
            self.state
                .realtime
                .publish(Topic::new(tenant, channel.into()), None, frame)
                .await;
        }
        Ok(())
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Typing {
    session_id: Uuid,
    sender_type: &'static str,
    sender_id: Option<Uuid>,
}
