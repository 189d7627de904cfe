//! The bus between nodes. Every node publishes realtime events and control
//! messages here and receives everyone's (its own included) on one local
//! broadcast: in-process when there is no Redis, else one Redis pub/sub
//! channel with a single subscription per node (RESP3 push, resubscribed
//! automatically after a Redis restart).

use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::sync::{broadcast, mpsc};

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
    redis: Option<RedisBus>,
}

struct RedisBus {
    publisher: ConnectionManager,
    channel: String,
}

impl Bus {
    /// An in-process bus (single node).
    pub fn local() -> Bus {
        let (local, _) = broadcast::channel(LOCAL_CAPACITY);
        Bus { local, redis: None }
    }

    /// A bus over Redis pub/sub on channel `<prefix>bus`.
    pub async fn redis(url: &str, prefix: &str) -> anyhow::Result<Bus> {
        let (local, _) = broadcast::channel(LOCAL_CAPACITY);
        let channel = format!("{prefix}bus");
        let client = redis::Client::open(resp3_url(url))?;
        let (push_tx, push_rx) = mpsc::unbounded_channel();
        let config = ConnectionManagerConfig::new()
            .set_push_sender(push_tx)
            .set_automatic_resubscription()
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_response_timeout(Some(Duration::from_secs(2)));
        let mut subscriber = ConnectionManager::new_with_config(client.clone(), config).await?;
        subscriber.subscribe(&channel).await?;
        let publisher_config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_response_timeout(Some(Duration::from_secs(2)));
        let publisher = ConnectionManager::new_with_config(client, publisher_config).await?;
        tokio::spawn(forward_pushes(push_rx, local.clone(), subscriber));
        Ok(Bus {
            local,
            redis: Some(RedisBus { publisher, channel }),
        })
    }

    /// Receives every message published on the bus from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<BusMessage>> {
        self.local.subscribe()
    }

    /// Publishes to every node. If Redis cannot be reached the message is
    /// still delivered on this node, so a single node keeps working.
    pub async fn publish(&self, topic: &str, payload: impl Into<Arc<str>>) {
        let message = BusMessage {
            topic: topic.to_string(),
            payload: payload.into(),
        };
        if let Some(redis) = &self.redis {
            let mut conn = redis.publisher.clone();
            let encoded = encode(&message);
            let sent: redis::RedisResult<i64> = redis::cmd("PUBLISH")
                .arg(&redis.channel)
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

/// Moves Redis pushes onto the local broadcast. Holds the subscriber
/// connection so that it (and its subscription) lives as long as the bus.
/// A connection manager reconnects only when it is used, and a subscriber
/// sends nothing: a PING every second lets it notice that Redis went away
/// and came back, reconnect and resubscribe (automatic resubscription).
async fn forward_pushes(
    mut pushes: mpsc::UnboundedReceiver<redis::PushInfo>,
    local: broadcast::Sender<Arc<BusMessage>>,
    mut subscriber: ConnectionManager,
) {
    let mut check = tokio::time::interval(SUBSCRIBER_CHECK);
    check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        let push = tokio::select! {
            push = pushes.recv() => push,
            _ = check.tick() => {
                let pong: redis::RedisResult<String> =
                    redis::cmd("PING").query_async(&mut subscriber).await;
                if let Err(error) = pong {
                    tracing::debug!(%error, "bus subscriber: Redis unreachable");
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
        if let Some(message) = decode(&raw) {
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
