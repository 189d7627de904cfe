//! The bus between nodes. Every node publishes realtime events and control
//! messages here and receives them on one local broadcast: in-process when
//! there is no Redis, else over Redis pub/sub on two kinds of channel:
//!
//! - `<prefix>bus`, node-wide: control messages every node needs (credential
//!   notices, auth cache invalidations); every node subscribes to it;
//! - `<prefix>bus:{<company>}`, one per company: its realtime events. A node
//!   subscribes to a company's channel while one of its own sockets holds a
//!   channel of that company ([`Bus::join`]), so a node without sockets of
//!   company A never receives A's traffic. The braces are a Redis Cluster
//!   hash tag: the channel lives in the same slot as the company's keys.
//!
//! On a Redis Cluster the company channels are sharded channels (SSUBSCRIBE,
//! SPUBLISH): each is served by the master owning its slot alone, so the
//! cluster's event traffic spreads over its masters. The node-wide channel
//! stays a plain one, which the cluster broadcasts to every master.
//! Control messages that must not be overtaken by a company's events go on
//! that company's channel too ([`Bus::publish_ahead_of`]).
//!
//! A join returns only once Redis has confirmed the subscription, so a
//! message published after a socket's `subscribed` reply is never lost.
//! Subscriptions are counted per company and changed under one lock, in
//! order, so a leave and a join racing each other end subscribed. The
//! subscriber connection resubscribes its channels after a reconnect
//! (automatic resubscription), and a change Redis did not confirm (it was
//! unreachable) is retried every second until it is.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use redis::aio::ConnectionManagerConfig;
use tokio::sync::{Mutex, broadcast, mpsc};
use uuid::Uuid;

use crate::redis_conn::RedisConn;

/// A message on the bus: a topic (`session:<id>`, `presence:<company>`,
/// `auth`, …) and a payload serialised once for every receiver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BusMessage {
    pub topic: String,
    pub payload: Arc<str>,
}

/// How many messages a slow local receiver may lag before it misses some.
const LOCAL_CAPACITY: usize = 16_384;

pub struct Bus {
    local: broadcast::Sender<Arc<BusMessage>>,
    redis: Option<Arc<RedisBus>>,
}

struct RedisBus {
    publisher: RedisConn,
    subscriber: RedisConn,
    /// The node-wide channel, `<prefix>bus`.
    channel: String,
    /// `<prefix>` (company channels are `<prefix>bus:{<company>}`).
    prefix: String,
    interest: Mutex<Interest>,
    /// Whether the subscriber's last command reached Redis: while it does
    /// not, joins do not wait for Redis (the retry subscribes them).
    reachable: AtomicBool,
    /// The company channels Redis confirmed this node's subscription to and
    /// that still have holders, read without waiting for a subscription
    /// change in progress.
    joined: std::sync::Mutex<HashSet<String>>,
}

/// The company channels this node wants, and which of them Redis has not
/// confirmed yet.
#[derive(Default)]
struct Interest {
    /// Local holders (sockets) per company channel; a channel is in the map
    /// only while it has at least one.
    holders: HashMap<String, usize>,
    /// Channels whose last SUBSCRIBE or UNSUBSCRIBE did not reach Redis.
    unsettled: HashSet<String>,
}

impl Bus {
    /// An in-process bus (single node).
    pub fn local() -> Bus {
        let (local, _) = broadcast::channel(LOCAL_CAPACITY);
        Bus { local, redis: None }
    }

    /// A bus over Redis pub/sub on channel `<prefix>bus` and the company
    /// channels `<prefix>bus:{<company>}`.
    pub async fn redis(url: &str, prefix: &str) -> anyhow::Result<Bus> {
        let (local, _) = broadcast::channel(LOCAL_CAPACITY);
        let channel = format!("{prefix}bus");
        let (push_tx, push_rx) = mpsc::unbounded_channel();
        let mut subscriber =
            RedisConn::subscriber(&resp3_url(url), push_tx, Duration::from_secs(2)).await?;
        subscriber.subscribe(&channel, false).await?;
        let publisher_config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_response_timeout(Some(Duration::from_secs(2)));
        let publisher = RedisConn::connect(&resp3_url(url), publisher_config).await?;
        let redis = Arc::new(RedisBus {
            publisher,
            subscriber,
            channel,
            prefix: prefix.to_string(),
            interest: Mutex::new(Interest::default()),
            reachable: AtomicBool::new(true),
            joined: std::sync::Mutex::new(HashSet::new()),
        });
        tokio::spawn(forward_pushes(
            push_rx,
            local.clone(),
            Arc::downgrade(&redis),
        ));
        Ok(Bus {
            local,
            redis: Some(redis),
        })
    }

    /// Receives every message this node's subscriptions bring from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<BusMessage>> {
        self.local.subscribe()
    }

    /// Hands every message on `topic` to `apply` until shutdown, and calls
    /// `missed` when messages were dropped because this listener fell behind
    /// (any of them may have been on `topic`). The subscription is taken
    /// before this returns, so nothing published afterwards is missed. For
    /// the node-wide notices (cache invalidations) every node applies.
    pub fn listen(
        &self,
        topic: &'static str,
        mut shutdown: tokio::sync::watch::Receiver<bool>,
        apply: impl Fn(&str) + Send + 'static,
        missed: impl Fn() + Send + 'static,
    ) -> tokio::task::JoinHandle<()> {
        let mut messages = self.subscribe();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = shutdown.wait_for(|stop| *stop) => return,
                    received = messages.recv() => match received {
                        Ok(message) if message.topic == topic => apply(&message.payload),
                        Ok(_) => {}
                        Err(broadcast::error::RecvError::Lagged(_)) => missed(),
                        Err(broadcast::error::RecvError::Closed) => return,
                    },
                }
            }
        })
    }

    /// The Redis channel of `company`'s realtime events (None without Redis).
    pub fn company_channel(&self, company_id: Uuid) -> Option<String> {
        self.redis
            .as_ref()
            .map(|redis| redis.company_channel(company_id))
    }

    /// Makes this node receive `company`'s realtime events for as long as the
    /// returned interest lives. Resolves once Redis has confirmed the
    /// subscription (or at once while Redis is unreachable: the subscription
    /// is then retried until it is made).
    pub async fn join(&self, company_id: Uuid) -> BusInterest {
        let Some(redis) = &self.redis else {
            return BusInterest { held: None };
        };
        let channel = redis.company_channel(company_id);
        redis.join(&channel).await;
        BusInterest {
            held: Some((redis.clone(), channel)),
        }
    }

    /// Publishes to every node. If Redis cannot be reached the message is
    /// still delivered on this node, so a single node keeps working.
    pub async fn publish(&self, topic: &str, payload: impl Into<Arc<str>>) {
        let channel = self
            .redis
            .as_ref()
            .map(|redis| (redis.channel.clone(), false));
        self.publish_on(channel, topic, payload.into()).await;
    }

    /// Publishes to every node a control message about `company` that must
    /// reach each node ahead of the company's events published after it.
    ///
    /// One Redis delivers all of a node's channels over its one subscriber
    /// connection, in publishing order: the node-wide channel does. On a
    /// cluster the company's events travel on its sharded channel, which
    /// another master than the node-wide channel's may serve, so the
    /// message goes first on the company's channel (in order with its
    /// events, to the nodes with its sockets), then on the node-wide
    /// channel for the other nodes. A node subscribed to the company's
    /// channel skips that second copy, so a late copy never undoes a newer
    /// message.
    pub async fn publish_ahead_of(
        &self,
        company_id: Uuid,
        topic: &str,
        payload: impl Into<Arc<str>>,
    ) {
        let payload = payload.into();
        let Some(redis) = self
            .redis
            .as_ref()
            .filter(|redis| redis.publisher.is_cluster())
        else {
            return self.publish(topic, payload).await;
        };
        let company_channel = redis.company_channel(company_id);
        self.publish_on(
            Some((company_channel.clone(), true)),
            topic,
            payload.clone(),
        )
        .await;
        let message = BusMessage {
            topic: topic.to_string(),
            payload,
        };
        let guarded = format!("{UNLESS_JOINED}{company_channel}\n{}", encode(&message));
        let sent: redis::RedisResult<i64> = redis::cmd("PUBLISH")
            .arg(&redis.channel)
            .arg(guarded)
            .query_async(&mut redis.publisher.clone())
            .await;
        if let Err(err) = sent {
            crate::metrics::redis_error();
            tracing::warn!(error = %err, "bus publish to Redis failed; nodes without the company's sockets miss it");
        }
    }

    /// Publishes a realtime event of `company` to the nodes that joined it
    /// (and to this node's own sockets, as [`Bus::publish`] does).
    pub async fn publish_to(&self, company_id: Uuid, topic: &str, payload: impl Into<Arc<str>>) {
        let channel = self
            .redis
            .as_ref()
            .map(|redis| (redis.company_channel(company_id), true));
        self.publish_on(channel, topic, payload.into()).await;
    }

    /// Publishes on `channel` (sharded on a cluster when its flag says so).
    async fn publish_on(&self, channel: Option<(String, bool)>, topic: &str, payload: Arc<str>) {
        let message = BusMessage {
            topic: topic.to_string(),
            payload,
        };
        if let (Some(redis), Some((channel, sharded))) = (&self.redis, channel) {
            let mut conn = redis.publisher.clone();
            let encoded = encode(&message);
            let sent: redis::RedisResult<i64> = redis::cmd(conn.publish_command(sharded))
                .arg(&channel)
                .arg(encoded)
                .query_async(&mut conn)
                .await;
            match sent {
                Ok(_) => return,
                Err(err) => {
                    crate::metrics::redis_error();
                    tracing::warn!(error = %err, "bus publish to Redis failed; delivering on this node only")
                }
            }
        }
        let _ = self.local.send(Arc::new(message));
    }
}

/// One local holder's share in a company channel: the node stays subscribed
/// while any lives. Dropping it leaves (in a task: leaving talks to Redis).
pub struct BusInterest {
    held: Option<(Arc<RedisBus>, String)>,
}

impl Drop for BusInterest {
    fn drop(&mut self) {
        let Some((redis, channel)) = self.held.take() else {
            return;
        };
        // Without a runtime the process is ending, and the subscriber
        // connection (with its subscriptions) with it.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { redis.leave(&channel).await });
        }
    }
}

impl RedisBus {
    fn company_channel(&self, company_id: Uuid) -> String {
        format!("{}bus:{{{company_id}}}", self.prefix)
    }

    async fn join(&self, channel: &str) {
        let mut interest = self.interest.lock().await;
        let holders = interest.holders.entry(channel.to_string()).or_insert(0);
        *holders += 1;
        // A channel still unsettled is subscribed by the retry, not here.
        if *holders == 1 && !interest.unsettled.contains(channel) {
            self.settle(&mut interest, channel, true).await;
        }
    }

    async fn leave(&self, channel: &str) {
        let mut interest = self.interest.lock().await;
        let Some(holders) = interest.holders.get_mut(channel) else {
            return;
        };
        *holders -= 1;
        if *holders == 0 {
            interest.holders.remove(channel);
            self.joined_channels().remove(channel);
            if !interest.unsettled.contains(channel) {
                self.settle(&mut interest, channel, false).await;
            }
        }
    }

    /// Subscribes to or unsubscribes from `channel`, or (while Redis is
    /// unreachable, or when the command fails) leaves it to the retry.
    async fn settle(&self, interest: &mut Interest, channel: &str, subscribed: bool) {
        if !self.reachable.load(Ordering::Acquire) {
            interest.unsettled.insert(channel.to_string());
            return;
        }
        let mut subscriber = self.subscriber.clone();
        let done = if subscribed {
            subscriber.subscribe(channel, true).await
        } else {
            subscriber.unsubscribe(channel, true).await
        };
        match done {
            Ok(()) => {
                interest.unsettled.remove(channel);
                if subscribed {
                    self.joined_channels().insert(channel.to_string());
                } else {
                    self.joined_channels().remove(channel);
                }
            }
            Err(error) => {
                tracing::warn!(%error, channel, subscribed, "bus subscription change failed; retrying");
                self.reachable.store(false, Ordering::Release);
                interest.unsettled.insert(channel.to_string());
            }
        }
    }

    /// Brings Redis in line with the wanted channels: the unsettled ones, or
    /// (after Redis was unreachable) every one, as a reconnect may have lost
    /// any of them.
    async fn reconcile(&self, everything: bool) {
        let mut interest = self.interest.lock().await;
        let mut channels: Vec<String> = interest.unsettled.iter().cloned().collect();
        if everything {
            channels.extend(interest.holders.keys().cloned());
            channels.sort();
            channels.dedup();
        }
        for channel in channels {
            let wanted = interest.holders.contains_key(&channel);
            self.settle(&mut interest, &channel, wanted).await;
            if !self.reachable.load(Ordering::Acquire) {
                return;
            }
        }
    }

    fn joined_channels(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        // The set stays whole whatever a panicking holder did.
        self.joined
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    async fn ping(&self) -> bool {
        let pong: redis::RedisResult<String> = redis::cmd("PING")
            .query_async(&mut self.subscriber.clone())
            .await;
        match pong {
            Ok(_) => true,
            Err(error) => {
                tracing::debug!(%error, "bus subscriber: Redis unreachable");
                false
            }
        }
    }
}

/// Redis pub/sub pushes need RESP3.
fn resp3_url(url: &str) -> String {
    if url.contains("protocol=") {
        url.to_string()
    } else if url.contains('?') {
        format!("{url}&protocol=resp3")
    } else {
        format!("{url}?protocol=resp3")
    }
}

/// Marks a message on the node-wide channel that a node subscribed to the
/// company channel after it skips: `unless-joined <channel>`, a newline,
/// the message's wire form (see [`Bus::publish_ahead_of`]).
const UNLESS_JOINED: &str = "unless-joined ";

/// Wire form: topic, a newline, the payload (topics never hold newlines).
fn encode(message: &BusMessage) -> String {
    format!("{}\n{}", message.topic, message.payload)
}

fn decode(raw: &str) -> Option<BusMessage> {
    let (topic, payload) = raw.split_once('\n')?;
    Some(BusMessage {
        topic: topic.to_string(),
        payload: payload.into(),
    })
}

/// How often the subscriber connection is checked while it is quiet.
const SUBSCRIBER_CHECK: Duration = Duration::from_secs(1);

/// Moves Redis pushes onto the local broadcast, until the bus is dropped.
/// A connection manager reconnects only when it is used, and a subscriber
/// sends nothing: a PING every second lets it notice that Redis went away
/// and came back, reconnect and resubscribe (automatic resubscription);
/// the same check retries the subscription changes Redis missed.
async fn forward_pushes(
    mut pushes: mpsc::UnboundedReceiver<redis::PushInfo>,
    local: broadcast::Sender<Arc<BusMessage>>,
    bus: std::sync::Weak<RedisBus>,
) {
    let mut check = tokio::time::interval(SUBSCRIBER_CHECK);
    check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        let push = tokio::select! {
            push = pushes.recv() => push,
            _ = check.tick() => {
                let Some(bus) = bus.upgrade() else {
                    break;
                };
                let was_reachable = bus.reachable.load(Ordering::Acquire);
                let reachable = bus.ping().await;
                bus.reachable.store(reachable, Ordering::Release);
                if reachable {
                    bus.reconcile(!was_reachable).await;
                }
                continue;
            }
        };
        let Some(push) = push else {
            break;
        };
        let Some(msg) = redis::Msg::from_push_info(push) else {
            continue;
        };
        let Ok(raw) = msg.get_payload::<String>() else {
            continue;
        };
        let raw = match raw.strip_prefix(UNLESS_JOINED) {
            None => raw.as_str(),
            Some(guarded) => {
                let Some((channel, raw)) = guarded.split_once('\n') else {
                    continue;
                };
                if bus
                    .upgrade()
                    .is_some_and(|bus| bus.joined_channels().contains(channel))
                {
                    continue;
                }
                raw
            }
        };
        if let Some(message) = decode(raw) {
            let _ = local.send(Arc::new(message));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_form_round_trips() {
        let message = BusMessage {
            topic: "session:1".into(),
            payload: "{\"a\":\"line\\nbreak\"}".into(),
        };
        assert_eq!(decode(&encode(&message)), Some(message));
        assert_eq!(resp3_url("redis://h:6379"), "redis://h:6379?protocol=resp3");
    }

    #[tokio::test]
    async fn local_bus_delivers_to_every_subscriber() {
        let bus = Bus::local();
        let mut a = bus.subscribe();
        let mut b = bus.subscribe();
        bus.publish("auth", "revoked").await;
        assert_eq!(a.recv().await.expect("a").payload.as_ref(), "revoked");
        assert_eq!(b.recv().await.expect("b").topic, "auth");
    }
}
