//! `GET /api/v1/ws`: the socket of agent consoles and visitor widgets
//! (protocol in docs/websocket.md).
//!
//! It is mounted beside the `/api/v1` router rather than in it (see
//! `realtime::workers::public_routes`): the router's scope layer refuses any request
//! without a `Principal`, and a browser authenticates with `?token=`, not a
//! key. So this handler authenticates both ways itself: `X-API-Key` through
//! the same `principal_for` as the middleware (and requires `chat:read`), or
//! a visitor or socket token.
//!
//! One task per socket, no split halves: it reads client frames, writes the
//! frames its hub queue receives, pings when idle, and stops on a dead peer,
//! a queue overflow (close 1013), its credentials ending (4401/4403: see
//! `realtime::credentials`; its key's expiry is its own timer) or shutdown
//! (close 1001).

mod auth;
mod budget;
mod frames;
mod peer;
mod teams_only;
mod ticket_replay;
mod typing;
mod viewing;

use std::time::{Duration, Instant};

use axum::extract::State;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::SinkExt;
use uuid::Uuid;

pub use auth::{Credential, WsQuery, authenticate, slot_for};
pub use viewing::sweep as sweep_viewers;

use super::bus::BusInterest;
use super::credentials::Ending;
use super::hub::{Close, Connection, Frame, KickSignal, Next};
use super::protocol::{self, ClientFrame, FrameRejection, HubChannel, ReceivedFrame};
use super::slots::Slot;
use crate::client_address::ClientAddress;
use crate::error::{ApiError, ErrorCode, StoreError};
use crate::extract::Query;
use crate::state::AppState;
use peer::Turns;

/// Buffers per socket (tungstenite's defaults cost ~135 KiB per idle socket).
const READ_BUFFER: usize = 4096;
const WRITE_BUFFER: usize = 4096;
/// Largest client frame: a 10 000-character message and its JSON.
const MAX_MESSAGE: usize = 64 * 1024;
/// Must hold the write buffer plus the largest frame we send.
const MAX_WRITE_BUFFER: usize = 256 * 1024;
/// A write that takes longer than this means the peer stopped reading.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// Queued frames written before one flush. Bounded so a batch's write
/// stays within `WRITE_TIMEOUT` of a reader at a normal pace, and the loop
/// still gets back to the client's frames and pings during a long burst.
const WRITE_BATCH: usize = 64;
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// Channels one socket may hold.
pub const MAX_SUBSCRIPTIONS: usize = 100;
/// Messages replayed per store query (replay loops until it has them all).
const REPLAY_BATCH: i64 = 200;
/// How long a replayed message's live copy is watched for (and dropped).
const REPLAY_DEDUPE: Duration = Duration::from_secs(30);
/// Typing events per session per socket are passed on at most this often.
const TYPING_INTERVAL: Duration = Duration::from_millis(500);

/// The handshake: authenticate (401/403 with the REST error body; a 401
/// counts as a failure of the client, and a client over that limit gets
/// 429 as on REST), take one of the token's socket slots (429 when all are
/// open), and upgrade with small buffers.
pub async fn handler(
    State(state): State<AppState>,
    headers: HeaderMap,
    ClientAddress(client): ClientAddress,
    Query(query): Query<WsQuery>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let token = query.token.as_deref();
    let changes_seen = state.realtime.hub.credential_changes();
    let credential = match authenticate(&state, &headers, token, client).await {
        Ok(credential) => credential,
        Err(error) => {
            if error.status == StatusCode::UNAUTHORIZED
                && let Some(refusal) = state.access.note_failure(client).await
            {
                return refusal.into_response();
            }
            return crate::auth::middleware::challenged(error);
        }
    };
    let (ping_interval, _) = state.realtime.keepalive();
    let slot = match slot_for(&credential, &headers, token) {
        None => None,
        Some((key, cap)) => match state.realtime.slots.take(key, cap, ping_interval).await {
            Some(slot) => Some(slot),
            None => {
                return ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    ErrorCode::RateLimited,
                    format!("At most {cap} sockets may be open at once with this token"),
                )
                .into_response();
            }
        },
    };
    let Ok(upgrade) = upgrade else {
        return ApiError::new(
            StatusCode::UPGRADE_REQUIRED,
            ErrorCode::UpgradeRequired,
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
        .on_upgrade(move |ws| run(state, credential, slot, changes_seen, ws))
}

/// Why a socket stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// The peer left, errored, or went silent: nothing more to say.
    Gone,
    /// The peer sent a close frame: answer it.
    PeerClosed,
    /// The server closes it: queue overflow (1013), shutdown (1001), or
    /// credentials no longer valid (4401, 4403).
    Closed(Close),
}

/// What woke the socket's loop.
enum Event {
    Expired,
    Incoming(Option<Result<Message, axum::Error>>),
    /// A frame, the kick, or the end, from the socket's hub queue.
    Queued(Next),
    Tick,
}

/// When the socket's key expires, as an instant of the runtime's clock
/// (`now` is the node's).
fn key_expiry(
    credential: &Credential,
    now: crate::time::Timestamp,
) -> Option<tokio::time::Instant> {
    let Credential::Agent {
        expires_at: Some(expires_at),
        ..
    } = credential
    else {
        return None;
    };
    let left = (expires_at.0 - now.0).to_std().unwrap_or(Duration::ZERO);
    Some(tokio::time::Instant::now() + left)
}

/// Resolves when `expiry` is reached, or never without one. The timer is
/// boxed, and made only for a key that expires: inline it would add its
/// size to every socket's task.
async fn until(expiry: &mut Option<std::pin::Pin<Box<tokio::time::Sleep>>>) {
    match expiry {
        Some(sleep) => sleep.as_mut().await,
        None => std::future::pending().await,
    }
}

/// Runs a write to the socket, giving up on a peer that stopped reading
/// (`WRITE_TIMEOUT`) or a kick (shutdown is one: `Hub::shut_down`).
async fn guarded<T>(
    kick: &KickSignal,
    write: impl Future<Output = Result<T, axum::Error>>,
) -> Result<T, Stop> {
    let mut write = std::pin::pin!(write);
    // A write the kernel takes at once (nearly all of them) needs neither
    // the timer nor the wait on the kick: arming and dropping them would
    // cost more than the write.
    let first = std::future::poll_fn(|cx| std::task::Poll::Ready(write.as_mut().poll(cx))).await;
    if let std::task::Poll::Ready(written) = first {
        return written.map_err(|_| Stop::Gone);
    }
    tokio::select! {
        written = tokio::time::timeout(WRITE_TIMEOUT, write) => match written {
            Ok(Ok(value)) => Ok(value),
            _ => Err(Stop::Gone),
        },
        close = kick.wait() => Err(Stop::Closed(close)),
    }
}

/// Whether `frame` is the live copy of a message the socket replayed
/// moments ago (forgetting the replayed set once it is old).
fn is_replayed_copy(replayed: &mut Option<Box<Replayed>>, frame: &Frame) -> bool {
    let (Some(id), Some((since, ids))) = (frame.message_id, replayed.as_deref()) else {
        return false;
    };
    if since.elapsed() > REPLAY_DEDUPE {
        *replayed = None;
        return false;
    }
    ids.contains(&(frame.topic.channel, id))
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

/// When a socket last replayed messages, and which.
type Replayed = (Instant, std::collections::HashSet<(HubChannel, Uuid)>);

/// Notes `recent` as just replayed, so their live copies are dropped.
fn note_replayed(
    replayed: &mut Option<Box<Replayed>>,
    recent: impl IntoIterator<Item = (HubChannel, Uuid)>,
) {
    let (since, seen) =
        &mut **replayed.get_or_insert_with(|| Box::new((Instant::now(), Default::default())));
    *since = Instant::now();
    seen.extend(recent);
}

/// A socket's state: boxed where a part is rare (a slot, a replay), since
/// every idle socket pays for each byte inline.
struct Socket {
    state: AppState,
    credential: Credential,
    /// The socket's place under its token's cap, freed when it is dropped.
    slot: Option<Box<Slot>>,
    ws: WebSocket,
    /// Whether the client may have sent something since it was last read.
    peer: std::sync::Arc<peer::PeerGate>,
    conn: Connection,
    /// This node's subscription to the company's bus channel, held from the
    /// socket's first channel to its last.
    bus_interest: Option<BusInterest>,
    /// Raised on a queue overflow, a credentials change and shutdown.
    kick: KickSignal,
    /// Messages this socket replayed, whose live copies it drops.
    replayed: Option<Box<Replayed>>,
    /// Session → entity of sessions an agent socket has touched.
    sessions: Vec<(Uuid, Uuid)>,
    last_typing: Option<(Uuid, Instant)>,
    /// Tickets whose channel or viewing this socket was allowed (so a
    /// burst of typing frames reads the ticket once).
    tickets: Vec<Uuid>,
    /// The socket's allowance of client frames.
    frames: budget::FrameBudget,
}

/// Builds the socket's state here, outside any future, so that the
/// socket's task holds it once and not beside copies of these arguments
/// (every byte of the task is paid by every idle socket), and returns the
/// socket's life.
fn run(
    state: AppState,
    credential: Credential,
    slot: Option<Slot>,
    changes_seen: u64,
    ws: WebSocket,
) -> impl Future<Output = ()> + Send {
    let hub = &state.realtime.hub;
    let conn = hub.connect(
        credential.holder(),
        credential.can_write(),
        credential.ticket_reads(),
    );
    let counted = crate::metrics::ws_opened(credential.is_visitor());
    // A change applied between the handshake and now did not see this
    // socket: look at its credentials again rather than wait for the re-check.
    let recheck = hub.credential_changes() != changes_seen;
    let frames = budget::FrameBudget::new(state.clock.instant());
    let mut socket = Socket {
        kick: conn.kick_signal(),
        state,
        credential,
        slot: slot.map(Box::new),
        ws,
        peer: peer::PeerGate::new(),
        conn,
        bus_interest: None,
        replayed: None,
        sessions: Vec::new(),
        last_typing: None,
        tickets: Vec::new(),
        frames,
    };
    // The block owns `socket` and works on it in place: an `async fn` taking
    // it would hold it twice (its argument and the binding it moves to).
    async move {
        let _counted = counted;
        if recheck {
            // Boxed: a store query's future would grow every socket's task.
            Box::pin(super::credentials::recheck_holder(
                &socket.state,
                socket.credential.holder(),
            ))
            .await;
        }
        let stop = socket.serve().await;
        // Unsubscribe and drop queued frames at once, then say goodbye.
        socket.conn.release();
        // Boxed: publishing is a bus call, rare beside the socket's life.
        Box::pin(viewing::release(&socket.state.realtime, socket.conn.id)).await;
        socket.bus_interest = None;
        let server_close = if let Stop::Closed(close) = stop {
            Some(close.code)
        } else {
            None
        };
        crate::metrics::ws_closed(server_close, stop == Stop::PeerClosed);
        let close = match stop {
            Stop::Gone => None,
            Stop::PeerClosed => {
                // Flushes the close reply the library has queued.
                let _ = Box::pin(tokio::time::timeout(
                    CLOSE_TIMEOUT,
                    SinkExt::close(&mut socket.ws),
                ))
                .await;
                None
            }
            Stop::Closed(close) => Some(close),
        };
        if let Some(close) = close {
            let frame = Message::Close(Some(CloseFrame {
                code: close.code,
                reason: close.reason.into(),
            }));
            let _ = Box::pin(tokio::time::timeout(CLOSE_TIMEOUT, socket.ws.send(frame))).await;
        }
    }
}

impl Socket {
    async fn serve(&mut self) -> Stop {
        let (ping_interval, dead_after) = self.state.realtime.keepalive();
        let mut last_heard = Instant::now();
        let start = tokio::time::Instant::now() + ping_interval;
        let mut ticker = tokio::time::interval_at(start, ping_interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let expiry = key_expiry(&self.credential, self.state.clock.now());
        let mut expiry = expiry.map(|at| Box::pin(tokio::time::sleep_until(at)));
        let mut turns = Turns::default();
        loop {
            // The kick comes through the queue (`Next::Kicked`), ahead of
            // any frame still queued.
            let peer_first = turns.peer_first();
            let mut peer_looked_at = false;
            let (ws, gate, conn) = (&mut self.ws, &self.peer, &self.conn);
            let event = tokio::select! {
                biased;
                _ = until(&mut expiry) => Event::Expired,
                next = conn.recv(), if !peer_first => Event::Queued(next),
                incoming = async {
                    peer_looked_at = true;
                    peer::next_message(gate, ws).await
                } => Event::Incoming(incoming),
                next = conn.recv(), if peer_first => Event::Queued(next),
                _ = ticker.tick() => Event::Tick,
            };
            turns.took(peer_looked_at);
            let outcome = match event {
                Event::Expired => {
                    let close = Close::unauthorized(Ending::Expired.reason());
                    // Through the hub too, so nothing more is queued to it.
                    self.conn.close(close);
                    Err(Stop::Closed(close))
                }
                Event::Incoming(incoming) => {
                    last_heard = Instant::now();
                    match incoming {
                        // Boxed: handling a frame awaits store queries whose
                        // futures are large; inline they would grow every idle
                        // socket's task by kilobytes.
                        Some(Ok(Message::Text(text))) => Box::pin(self.on_text(&text)).await,
                        Some(Ok(Message::Binary(_))) => {
                            let frame = match self.spend_frame() {
                                Some(retry_after) => protocol::rate_limited(None, retry_after),
                                None => protocol::error(
                                    None,
                                    ErrorCode::InvalidJson,
                                    "Frames must be JSON text",
                                ),
                            };
                            Box::pin(self.send_text(frame)).await
                        }
                        Some(Ok(Message::Close(_))) => Err(Stop::PeerClosed),
                        Some(Err(_)) | None => Err(Stop::Gone),
                        Some(Ok(_)) => Ok(()), // ping (answered by the library) or pong
                    }
                }
                // Boxed, as every write below: a write's future (its
                // timeout's timer, the kick's wait) lives only
                // while it writes; inline it would be part of every idle
                // socket's task.
                Event::Queued(Next::Frame(frame)) => Box::pin(self.forward(frame)).await,
                Event::Queued(Next::Kicked(close)) => Err(Stop::Closed(close)),
                Event::Queued(Next::Released) => Err(Stop::Gone),
                Event::Tick => {
                    if let Some(slot) = &self.slot {
                        // Boxed like `on_text`: a Redis call's future is large.
                        Box::pin(slot.refresh()).await;
                    }
                    let silent = last_heard.elapsed();
                    if silent >= dead_after {
                        Err(Stop::Gone)
                    } else if silent >= ping_interval {
                        Box::pin(self.send(Message::Ping(Default::default()))).await
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
        guarded(&kick, self.ws.send(message)).await?;
        crate::metrics::ws_frames_sent(1);
        Ok(())
    }

    async fn send_text(&mut self, text: String) -> Result<(), Stop> {
        self.send(Message::Text(text.into())).await
    }

    /// Writes a frame from the hub queue and the frames already queued
    /// behind it (up to `WRITE_BATCH`), then flushes once: a burst of
    /// fan-out costs one flush, one write to the kernel, per batch instead
    /// of per frame. The queue is read in order, so frames keep their
    /// order. Live copies of messages this socket just replayed are dropped.
    async fn forward(&mut self, first: std::sync::Arc<Frame>) -> Result<(), Stop> {
        let Socket {
            ws,
            conn,
            replayed,
            kick,
            ..
        } = self;
        let write = async {
            let mut written = 0;
            let mut next = Some(first);
            let mut taken = 0;
            while let Some(frame) = next {
                taken += 1;
                if !is_replayed_copy(replayed, &frame) {
                    ws.feed(Message::Text(frame.text.clone())).await?;
                    written += 1;
                }
                next = if taken < WRITE_BATCH {
                    conn.try_recv()
                } else {
                    None
                };
            }
            if written > 0 {
                ws.flush().await?;
            }
            Ok(written)
        };
        let written = guarded(kick, write).await?;
        crate::metrics::ws_frames_sent(written);
        Ok(())
    }

    /// Spends one client frame of the socket's allowance: None when
    /// allowed, else the seconds to wait (the refusal counted).
    fn spend_frame(&mut self) -> Option<u64> {
        let now = self.state.clock.instant();
        let retry_after = self
            .frames
            .spend(now, self.state.config.socket_frame_rate)?;
        crate::metrics::rate_limited(crate::metrics::Limiter::SocketFrames);
        Some(retry_after)
    }

    /// A client's text frame: parsed (so a refusal can echo its `id`), its
    /// allowance spent, then handled.
    async fn on_text(&mut self, text: &Utf8Bytes) -> Result<(), Stop> {
        let parsed = ReceivedFrame::parse(text.as_str());
        if let Some(retry_after) = self.spend_frame() {
            let id = match &parsed {
                Ok(ReceivedFrame { id, .. }) | Err(FrameRejection::UnknownType { id }) => {
                    id.as_ref()
                }
                Err(FrameRejection::NotJson) => None,
            };
            return self
                .send_text(protocol::rate_limited(id, retry_after))
                .await;
        }
        let ReceivedFrame { id, frame } = match parsed {
            Ok(received) => received,
            Err(rejection) => return self.send_text(rejection.error_frame()).await,
        };
        let id = id.as_ref();
        let outcome = match frame {
            ClientFrame::Subscribe { channel, since } => {
                self.subscribe(channel.as_deref(), since.as_deref(), id)
                    .await
            }
            ClientFrame::Unsubscribe { channel } => self.unsubscribe(channel.as_deref(), id).await,
            // Boxed: posting a message runs the chat store's transaction,
            // whose future is ~23 KiB; inline, every frame (a subscribe, a
            // ping) would allocate that much.
            ClientFrame::Message(message) => Box::pin(self.message(&message, id)).await,
            ClientFrame::Typing {
                ticket_id: Some(ticket_id),
                ..
            } => {
                self.hold_ticket(Some(&ticket_id), viewing::Hold::Type)
                    .await
            }
            ClientFrame::Viewing { ticket_id } => {
                self.hold_ticket(ticket_id.as_deref(), viewing::Hold::View)
                    .await
            }
            ClientFrame::Leave { ticket_id } => {
                self.hold_ticket(ticket_id.as_deref(), viewing::Hold::Leave)
                    .await
            }
            ClientFrame::Typing {
                session_id,
                sender_id,
                ticket_id: None,
            } => {
                self.typing(session_id.as_deref(), sender_id.as_deref())
                    .await
            }
            ClientFrame::Ping => Ok(self.send_text(protocol::reply("pong", None, id)).await?),
        };
        match outcome {
            Ok(()) => Ok(()),
            Err(Fail::Stop(stop)) => Err(stop),
            Err(Fail::Api(error)) => {
                let frame = protocol::error(id, error.code, &error.message);
                self.send_text(frame).await
            }
        }
    }
}
