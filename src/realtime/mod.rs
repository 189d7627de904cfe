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
//! [`tickets`] what the ticket channels carry once a change has committed,
//! [`watchers`] who is viewing or typing on a ticket (collision),
//! [`workers`] this node's realtime tasks and the socket route.

pub use infra::bus;
pub mod credentials;
pub mod hub;
pub mod presence;
pub mod protocol;
pub mod shutdown;
pub mod slots;
pub mod store;
pub mod tickets;
pub mod token;
pub mod watchers;
pub mod workers;
pub mod ws;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::Serialize;
use tokio::sync::OnceCell;
use uuid::Uuid;

use crate::auth::Tenant;
use crate::config::Config;
use crate::db::Db;
use crate::error::StoreError;
use crate::time::Timestamp;
use bus::{Bus, BusMessage};
use hub::{Frame, Hub, TicketReads};
use presence::{AgentPresence, Presence, Visibility};
use protocol::{HubChannel, Topic};
use token::TokenKey;

/// A socket silent this long is pinged; silent for `DEAD_AFTER`, dropped.
pub const PING_INTERVAL: Duration = Duration::from_secs(25);
pub const DEAD_AFTER: Duration = Duration::from_secs(60);

/// How often each node re-checks the credentials of its open sockets
/// (`credentials`), unless a test shortens it.
pub const RECHECK_INTERVAL: Duration = Duration::from_secs(5);

/// Name of the server secret that signs socket and visitor tokens.
const TOKEN_SECRET: &str = "socket-tokens";

pub struct Realtime {
    pub bus: Bus,
    pub hub: Arc<Hub>,
    pub presence: Presence,
    /// Who views or types on which ticket, from this node's sockets.
    pub watchers: watchers::Watchers,
    /// Sockets open per visitor or socket token (on every node with Redis).
    pub slots: slots::SocketSlots,
    tokens: OnceCell<TokenKey>,
    /// Ping interval and dead-peer limit in milliseconds (tests shorten them).
    keepalive: (AtomicU64, AtomicU64),
    /// How often socket credentials are re-checked, in milliseconds.
    recheck: AtomicU64,
    /// How long an agent session lasts idle: the re-check closes the
    /// sockets of one idle longer.
    session_idle: Duration,
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
            watchers: watchers::Watchers::new(clock.clone()),
            slots,
            tokens: OnceCell::new(),
            keepalive: (
                AtomicU64::new(PING_INTERVAL.as_millis() as u64),
                AtomicU64::new(DEAD_AFTER.as_millis() as u64),
            ),
            recheck: AtomicU64::new(RECHECK_INTERVAL.as_millis() as u64),
            session_idle: config.session_idle,
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

    /// Sends an event of `kind` about session `session_id` to both of its
    /// channel's audiences, each frame named `session:<id>`: the agents
    /// subscribed to it get `agents`, the session's visitor `visitor` (the
    /// same event without user ids; see `HubChannel::VisitorSession`).
    pub async fn publish_to_session(
        &self,
        tenant: Tenant,
        session_id: Uuid,
        kind: &str,
        message_id: Option<Uuid>,
        agents: &impl Serialize,
        visitor: &impl Serialize,
    ) {
        let change = SessionChange {
            kind,
            message_id,
            actor: None,
        };
        self.publish_change_to_session(tenant, session_id, change, agents, visitor)
            .await;
    }

    /// `publish_to_session` of a change: the agents' frame also names
    /// `change.actor`, who made it (the visitor's does not: a key's name is
    /// the company's own business).
    pub async fn publish_change_to_session(
        &self,
        tenant: Tenant,
        session_id: Uuid,
        change: SessionChange<'_>,
        agents: &impl Serialize,
        visitor: &impl Serialize,
    ) {
        let SessionChange {
            kind,
            message_id,
            actor,
        } = change;
        let name = protocol::Channel::Session(session_id).name();
        for (channel, frame) in [
            (
                HubChannel::Session(session_id),
                protocol::change(kind, &name, None, agents, actor),
            ),
            (
                HubChannel::VisitorSession(session_id),
                protocol::event(kind, &name, None, visitor),
            ),
        ] {
            self.publish(Topic::new(tenant, channel), message_id, frame)
                .await;
        }
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
        // Who views a ticket is ticket data: a socket whose key lost
        // `tickets:read` hears none of it.
        let needs = match topic.channel {
            HubChannel::Ticket(_) => TicketReads::Public,
            _ => TicketReads::Nothing,
        };
        self.hub.dispatch(Arc::new(Frame {
            topic,
            message_id,
            needs,
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

    /// Publishes the change to `topic`'s audience: agents on `Presence`,
    /// visitors (names only) on `PublicPresence`.
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
        let frame = match topic.channel {
            HubChannel::PublicPresence => visitor_presence_frame(agent, online),
            _ => presence_frame(agent, online),
        };
        self.publish(topic, None, frame).await;
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

    pub fn session_idle(&self) -> Duration {
        self.session_idle
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

    /// A visitor token with `claims`: with it a browser opens
    /// `/api/v1/ws?token=…` and reads and posts in that session only.
    pub async fn visitor_token(
        &self,
        db: &Db,
        claims: &token::VisitorClaims,
    ) -> Result<String, StoreError> {
        Ok(self.token_key(db).await?.visitor_token(claims))
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

/// An agent's presence as visitors see it: the name, never the user id.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct VisitorPresenceData<'a> {
    name: &'a str,
    online: bool,
    last_seen: Timestamp,
    visibility: Visibility,
}

/// The `presence` frame of a visitor's socket: `{name, online, lastSeen,
/// visibility}`, no `userId`.
pub fn visitor_presence_frame(agent: &AgentPresence, online: bool) -> String {
    protocol::event(
        "presence",
        "presence",
        None,
        &VisitorPresenceData {
            name: &agent.name,
            online,
            last_seen: agent.last_seen,
            visibility: agent.visibility,
        },
    )
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

/// What a session frame of a change tells: its `kind`, the chat message it
/// carries (if any) and who made the change.
pub struct SessionChange<'a> {
    pub kind: &'a str,
    pub message_id: Option<Uuid>,
    pub actor: Option<&'a crate::actor::Actor>,
}
