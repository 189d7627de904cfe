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

mod redis_side;
use redis_side::{UNLESS_JOINED, encode, forward_pushes, resp3_url};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_form_round_trips() {
        let message = BusMessage {
            topic: "session:1".into(),
            payload: "{\"a\":\"line\\nbreak\"}".into(),
        };
        assert_eq!(redis_side::decode(&encode(&message)), Some(message));
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
