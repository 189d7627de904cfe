//! Realtime, in three parts with narrow interfaces (the split centrifuge uses):
//!
//! - [`hub`]: this node's sockets and their channel subscriptions;
//! - [`bus`]: events between nodes (Redis pub/sub or in process);
//! - [`presence`]: agents online with a TTL (Redis or in process).
//!
//! Publishing goes through the bus only: every node (the publisher too)
//! with sockets of the event's company receives it on that company's bus
//! channel, and the dispatcher hands it to its hub, which queues the same
//! bytes to each local socket.
//! [`ws`] is the socket endpoint, [`protocol`] its frames, [`token`] the
//! visitor and socket tokens, [`slots`] the caps on sockets per token,
//! [`credentials`] what closes a socket whose credentials stopped being valid,
//! [`tickets`] what the ticket channels carry once a change has committed.

pub mod bus;
pub mod credentials;
pub mod hub;
pub mod presence;
pub mod protocol;
pub mod slots;
pub mod store;
pub mod tickets;
pub mod token;
pub mod ws;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use serde::Serialize;
use tokio::sync::OnceCell;
use tokio::task::JoinHandle;
use uuid::Uuid;

use crate::auth::Tenant;
use crate::config::Config;
use crate::db::Db;
use crate::error::StoreError;
use crate::state::AppState;
use crate::time::Timestamp;
use bus::{Bus, BusMessage};
use hub::{Frame, Hub};
use presence::{AgentPresence, Presence, Visibility};
use protocol::{HubChannel, Topic};
use token::TokenKey;

/// How often each node claims expired presence (announced within 2 s).
pub const SWEEP_INTERVAL: Duration = Duration::from_millis(500);

/// A socket silent this long is pinged; silent for `DEAD_AFTER`, dropped.
pub const PING_INTERVAL: Duration = Duration::from_secs(25);
pub const DEAD_AFTER: Duration = Duration::from_secs(60);

/// Name of the server secret that signs socket and visitor tokens.
const TOKEN_SECRET: &str = "socket-tokens";

pub struct Realtime {
    pub bus: Bus,
    pub hub: Arc<Hub>,
    pub presence: Presence,
    /// Sockets open per visitor or socket token (on every node with Redis).
    pub slots: slots::SocketSlots,
    tokens: OnceCell<TokenKey>,
    /// Ping interval and dead-peer limit in milliseconds (tests shorten them).
    keepalive: (AtomicU64, AtomicU64),
    /// How often socket credentials are re-checked, in milliseconds.
    recheck: AtomicU64,
}

impl Realtime {
    /// `clock` is the node's: presence expires by it.
    pub async fn new(
        config: &Config,
        redis: Option<crate::redis_conn::RedisConn>,
        clock: &crate::time::Clock,
    ) -> anyhow::Result<Self> {
        let bus = match &config.redis_url {
            Some(url) => Bus::redis(url, &config.redis_prefix).await?,
            None => Bus::local(),
        };
        let slots = slots::SocketSlots::new(
            redis
                .clone()
                .map(|conn| slots::RedisSlots::new(conn, &config.redis_prefix)),
        );
        let presence = match redis {
            Some(conn) => Presence::redis(
                conn,
                &config.redis_prefix,
                config.presence_ttl,
                clock.clone(),
            ),
            None => Presence::local(config.presence_ttl, clock.clone()),
        };
        Ok(Realtime {
            bus,
            hub: Arc::new(Hub::default()),
            presence,
            slots,
            tokens: OnceCell::new(),
            keepalive: (
                AtomicU64::new(PING_INTERVAL.as_millis() as u64),
                AtomicU64::new(DEAD_AFTER.as_millis() as u64),
            ),
            recheck: AtomicU64::new(credentials::RECHECK_INTERVAL.as_millis() as u64),
        })
    }

    /// Sends `frame` (a serialised server frame) to every socket on every
    /// node subscribed to `topic`. `message_id` names the chat message the
    /// frame carries, if any. Call it after the change has committed.
    pub async fn publish(&self, topic: Topic, message_id: Option<Uuid>, frame: String) {
        let company_id = topic.tenant.company_id;
        self.bus
            .publish_to(company_id, &topic.bus_topic(message_id), frame)
            .await;
    }

    /// Hands a bus message to this node's sockets (other bus traffic is
    /// ignored). Returns how many sockets took it.
    pub fn dispatch(&self, message: &BusMessage) -> usize {
        if let Some(delivered) = tickets::dispatch(&self.hub, message) {
            return delivered;
        }
        let Some((topic, message_id)) = Topic::parse_bus_topic(&message.topic) else {
            return 0;
        };
        if self.hub.subscribers(&topic) == 0 {
            return 0;
        }
        self.hub.dispatch(Arc::new(Frame {
            topic,
            message_id,
            text: message.payload.as_ref().into(),
        }))
    }

    /// Announces a presence change of one agent: to agents on `presence`
    /// every change, to visitors only what PUBLIC agents do. `None` is
    /// offline. A heartbeat that changes nothing shown announces nothing.
    pub async fn presence_changed(
        &self,
        tenant: &Tenant,
        before: Option<&AgentPresence>,
        after: Option<&AgentPresence>,
    ) {
        let agents = Topic::new(*tenant, HubChannel::Presence);
        self.announce(agents, before, after).await;
        let visitors = Topic::new(*tenant, HubChannel::PublicPresence);
        let public = |a: &&AgentPresence| a.is_public();
        self.announce(visitors, before.filter(public), after.filter(public))
            .await;
    }

    async fn announce(
        &self,
        topic: Topic,
        before: Option<&AgentPresence>,
        after: Option<&AgentPresence>,
    ) {
        let (agent, online) = match (before, after) {
            (None, Some(now)) => (now, true),
            (Some(was), None) => (was, false),
            (Some(was), Some(now)) if !was.same_view(now) => (now, true),
            _ => return,
        };
        self.publish(topic, None, presence_frame(agent, online))
            .await;
    }

    /// How often an idle socket is pinged, and after how long without any
    /// frame from the peer it is dropped. Applies to sockets opened later.
    pub fn set_keepalive(&self, ping_interval: Duration, dead_after: Duration) {
        let millis = |d: Duration| (d.as_millis() as u64).max(1);
        self.keepalive
            .0
            .store(millis(ping_interval), Ordering::Relaxed);
        self.keepalive
            .1
            .store(millis(dead_after), Ordering::Relaxed);
    }

    pub fn keepalive(&self) -> (Duration, Duration) {
        (
            Duration::from_millis(self.keepalive.0.load(Ordering::Relaxed)),
            Duration::from_millis(self.keepalive.1.load(Ordering::Relaxed)),
        )
    }

    /// How often this node re-checks its sockets' credentials. Applies to
    /// the re-check worker started later (`App::run_until_stopped`).
    pub fn set_recheck_interval(&self, interval: Duration) {
        let millis = (interval.as_millis() as u64).max(1);
        self.recheck.store(millis, Ordering::Relaxed);
    }

    pub fn recheck_interval(&self) -> Duration {
        Duration::from_millis(self.recheck.load(Ordering::Relaxed))
    }

    /// The signing key of socket and visitor tokens (loaded once per node).
    pub async fn token_key(&self, db: &Db) -> Result<&TokenKey, StoreError> {
        self.tokens
            .get_or_try_init(|| async {
                let secret = store::server_secret(db, TOKEN_SECRET).await?;
                Ok(TokenKey::new(&secret))
            })
            .await
    }

    /// The visitor token of a chat session: with it a browser opens
    /// `/api/v1/ws?token=…` and reads and posts in that session only.
    pub async fn visitor_token(
        &self,
        db: &Db,
        tenant: &Tenant,
        session_id: Uuid,
    ) -> Result<String, StoreError> {
        Ok(self.token_key(db).await?.visitor_token(tenant, session_id))
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PresenceData<'a> {
    user_id: Uuid,
    name: &'a str,
    online: bool,
    last_seen: Timestamp,
    visibility: Visibility,
}

/// `{"type":"presence","channel":"presence","data":{userId, name, online, lastSeen, visibility}}`
pub fn presence_frame(agent: &AgentPresence, online: bool) -> String {
    protocol::event(
        "presence",
        "presence",
        None,
        &PresenceData {
            user_id: agent.user_id,
            name: &agent.name,
            online,
            last_seen: agent.last_seen,
            visibility: agent.visibility,
        },
    )
}

/// Routes outside the authenticated `/api/v1` router: the socket endpoint
/// `/api/v1/ws`, which authenticates its own `?token=` or `X-API-Key` (see
/// `ws::handler` for why it is mounted here).
pub fn public_routes() -> Router<AppState> {
    Router::new().route("/api/v1/ws", axum::routing::get(ws::handler))
}

/// This node's realtime workers: the bus → hub dispatcher, the presence
/// sweeper and the credentials re-check. All stop on shutdown (sockets
/// are closed by `close_sockets_at_shutdown`).
pub fn spawn_workers(state: &AppState) -> Vec<JoinHandle<()>> {
    vec![
        tokio::spawn(run_dispatcher(state.clone())),
        tokio::spawn(run_sweeper(state.clone())),
        tokio::spawn(credentials::run_recheck(state.clone())),
    ]
}

/// Closes this node's sockets (1001) once shutdown begins, and any socket
/// that registers after. Runs on every node, with or without the workers.
pub async fn close_sockets_at_shutdown(state: AppState) {
    let mut shutdown = state.shutdown.clone();
    ws::stopping(&mut shutdown).await;
    state.realtime.hub.shut_down();
}

async fn run_dispatcher(state: AppState) {
    let realtime = state.realtime.clone();
    let mut messages = realtime.bus.subscribe();
    let mut shutdown = state.shutdown.clone();
    loop {
        tokio::select! {
            received = messages.recv() => match received {
                // Applied here, in bus order: an event published after a
                // notice never reaches the sockets it closed.
                Ok(message) if message.topic == credentials::TOPIC => {
                    match credentials::Notice::decode(&message.payload) {
                        Some(notice) => notice.apply(&realtime.hub),
                        None => tracing::warn!(payload = %message.payload, "unknown credentials notice"),
                    }
                }
                Ok(message) => {
                    realtime.dispatch(&message);
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "realtime dispatcher lagged; events were dropped");
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            },
            _ = ws::stopping(&mut shutdown) => return,
        }
    }
}

async fn run_sweeper(state: AppState) {
    let mut shutdown = state.shutdown.clone();
    let mut ticker = tokio::time::interval(SWEEP_INTERVAL);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut failing = false;
    loop {
        tokio::select! {
            _ = ticker.tick() => match sweep_once(&state).await {
                Ok(()) if failing => {
                    tracing::info!("presence sweep works again");
                    failing = false;
                }
                Ok(()) => {}
                // Logged once per outage, not twice a second.
                Err(err) if !failing => {
                    tracing::warn!(error = %err, "presence sweep failed; retrying");
                    failing = true;
                }
                Err(_) => {}
            },
            _ = ws::stopping(&mut shutdown) => return,
        }
    }
}

/// One sweep: announces every agent whose presence has expired (public so
/// a test can drive it).
pub async fn sweep_once(state: &AppState) -> Result<(), StoreError> {
    for (tenant, agent) in state.realtime.presence.sweep().await? {
        state
            .realtime
            .presence_changed(&tenant, Some(&agent), None)
            .await;
        crate::teams::routing::agent_away(state, &tenant, agent.user_id).await;
    }
    Ok(())
}
