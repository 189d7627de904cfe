//! The hub: this node's sockets and the channels they subscribe to. It knows
//! nothing of other nodes (the bus brings their events) nor of the protocol
//! (frames arrive serialised). Each event is serialised once and the same
//! bytes are queued to every subscribed socket; each socket's queue is
//! bounded, and a socket whose queue overflows is kicked (closed with 1013)
//! rather than buffered without end.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use axum::extract::ws::Utf8Bytes;
use dashmap::DashMap;
use tokio::sync::{Notify, mpsc};
use uuid::Uuid;

use super::protocol::Topic;

/// Frames a socket may have queued before it counts as too slow.
pub const QUEUE_CAPACITY: usize = 256;

/// One event, serialised once, shared by every socket it goes to.
#[derive(Debug)]
pub struct Frame {
    pub topic: Topic,
    /// The chat message this frame carries, if any (to drop a live copy of
    /// a message the socket has just replayed).
    pub message_id: Option<Uuid>,
    pub text: Utf8Bytes,
}

pub struct Hub {
    channels: DashMap<Topic, Vec<Subscriber>>,
    connections: AtomicUsize,
    next_id: AtomicU64,
    queue_capacity: usize,
}

#[derive(Clone)]
struct Subscriber {
    conn: u64,
    queue: mpsc::Sender<Arc<Frame>>,
    kick: Arc<Kick>,
}

/// Raised once, when a socket's queue overflows.
#[derive(Default)]
struct Kick {
    raised: AtomicBool,
    notify: Notify,
}

impl Kick {
    fn raise(&self) {
        if !self.raised.swap(true, Ordering::AcqRel) {
            // notify_one keeps a permit if the socket is not waiting yet.
            self.notify.notify_one();
        }
    }
}

impl Default for Hub {
    fn default() -> Self {
        Hub::new(QUEUE_CAPACITY)
    }
}

impl Hub {
    pub fn new(queue_capacity: usize) -> Self {
        Hub {
            channels: DashMap::new(),
            connections: AtomicUsize::new(0),
            next_id: AtomicU64::new(1),
            queue_capacity: queue_capacity.max(1),
        }
    }

    /// Registers a socket. The returned connection unregisters it (and all
    /// its subscriptions) when dropped.
    pub fn connect(self: &Arc<Self>) -> Connection {
        let (queue, rx) = mpsc::channel(self.queue_capacity);
        self.connections.fetch_add(1, Ordering::Relaxed);
        Connection {
            hub: self.clone(),
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            queue,
            rx,
            kick: Arc::new(Kick::default()),
            topics: Vec::new(),
            released: false,
        }
    }

    /// Queues `frame` to every local socket subscribed to its topic; returns
    /// how many took it. A socket whose queue is full is kicked.
    pub fn dispatch(&self, frame: Arc<Frame>) -> usize {
        let Some(subscribers) = self.channels.get(&frame.topic) else {
            return 0;
        };
        let mut delivered = 0;
        for subscriber in subscribers.iter() {
            match subscriber.queue.try_send(frame.clone()) {
                Ok(()) => delivered += 1,
                Err(mpsc::error::TrySendError::Full(_)) => subscriber.kick.raise(),
                Err(mpsc::error::TrySendError::Closed(_)) => {}
            }
        }
        delivered
    }

    /// Sockets open on this node.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::Relaxed)
    }

    /// Local sockets subscribed to `topic`.
    pub fn subscribers(&self, topic: &Topic) -> usize {
        self.channels.get(topic).map_or(0, |s| s.len())
    }

    fn remove(&self, topic: &Topic, conn: u64) {
        if let Some(mut subscribers) = self.channels.get_mut(topic) {
            subscribers.retain(|s| s.conn != conn);
            let empty = subscribers.is_empty();
            drop(subscribers);
            if empty {
                self.channels.remove_if(topic, |_, s| s.is_empty());
            }
        }
    }
}

/// Waits for a socket's kick (held apart from the connection so a socket
/// can wait for it while it reads its queue).
#[derive(Clone)]
pub struct KickSignal(Arc<Kick>);

impl KickSignal {
    /// Resolves once the queue has overflowed (cancel-safe).
    pub async fn wait(&self) {
        if self.0.raised.load(Ordering::Acquire) {
            return;
        }
        self.0.notify.notified().await;
    }
}

/// One socket's registration: its queue and its subscriptions.
pub struct Connection {
    hub: Arc<Hub>,
    pub id: u64,
    /// Kept so the queue never reports closed while the socket lives.
    queue: mpsc::Sender<Arc<Frame>>,
    rx: mpsc::Receiver<Arc<Frame>>,
    kick: Arc<Kick>,
    topics: Vec<Topic>,
    released: bool,
}

impl Connection {
    /// Subscribes to `topic`; false if already subscribed.
    pub fn subscribe(&mut self, topic: Topic) -> bool {
        if self.released || self.topics.contains(&topic) {
            return false;
        }
        self.topics.push(topic);
        self.hub
            .channels
            .entry(topic)
            .or_default()
            .push(Subscriber {
                conn: self.id,
                queue: self.queue.clone(),
                kick: self.kick.clone(),
            });
        true
    }

    /// Unsubscribes from `topic`; false if it was not subscribed.
    pub fn unsubscribe(&mut self, topic: &Topic) -> bool {
        let Some(at) = self.topics.iter().position(|t| t == topic) else {
            return false;
        };
        self.topics.swap_remove(at);
        self.hub.remove(topic, self.id);
        true
    }

    pub fn subscriptions(&self) -> usize {
        self.topics.len()
    }

    /// The next queued frame (cancel-safe).
    pub async fn recv(&mut self) -> Option<Arc<Frame>> {
        self.rx.recv().await
    }

    /// A handle that resolves once the socket's queue has overflowed.
    pub fn kick_signal(&self) -> KickSignal {
        KickSignal(self.kick.clone())
    }

    pub fn is_subscribed(&self, topic: &Topic) -> bool {
        self.topics.contains(topic)
    }

    /// Unregisters the socket now: ends every subscription and drops the
    /// queued frames (a socket saying goodbye no longer counts). Also done
    /// on drop.
    pub fn release(&mut self) {
        if self.released {
            return;
        }
        self.released = true;
        for topic in std::mem::take(&mut self.topics) {
            self.hub.remove(&topic, self.id);
        }
        self.rx.close();
        while self.rx.try_recv().is_ok() {}
        self.hub.connections.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::{Mode, Tenant};
    use crate::realtime::protocol::HubChannel;

    fn topic(mode: Mode) -> Topic {
        Topic::new(
            Tenant {
                company_id: Uuid::nil(),
                mode,
            },
            HubChannel::Presence,
        )
    }

    fn frame(topic: Topic, text: &str) -> Arc<Frame> {
        Arc::new(Frame {
            topic,
            message_id: None,
            text: text.into(),
        })
    }

    #[tokio::test]
    async fn frames_go_to_subscribers_of_their_topic_only() {
        let hub = Arc::new(Hub::new(4));
        let mut test_socket = hub.connect();
        let mut live_socket = hub.connect();
        assert!(test_socket.subscribe(topic(Mode::Test)));
        assert!(!test_socket.subscribe(topic(Mode::Test)));
        live_socket.subscribe(topic(Mode::Live));
        assert_eq!(hub.dispatch(frame(topic(Mode::Test), "t")), 1);
        let got = test_socket.recv().await.expect("frame");
        assert_eq!(got.text.as_str(), "t");
        assert!(live_socket.rx.try_recv().is_err());
        assert!(test_socket.unsubscribe(&topic(Mode::Test)));
        assert_eq!(hub.subscribers(&topic(Mode::Test)), 0);
        assert_eq!(hub.connections(), 2);
        drop(live_socket);
        assert_eq!(hub.connections(), 1);
        assert_eq!(hub.subscribers(&topic(Mode::Live)), 0);
    }

    #[tokio::test]
    async fn a_full_queue_kicks_the_socket() {
        let hub = Arc::new(Hub::new(2));
        let mut socket = hub.connect();
        socket.subscribe(topic(Mode::Test));
        for _ in 0..2 {
            assert_eq!(hub.dispatch(frame(topic(Mode::Test), "x")), 1);
        }
        assert_eq!(hub.dispatch(frame(topic(Mode::Test), "x")), 0);
        tokio::time::timeout(
            std::time::Duration::from_secs(1),
            socket.kick_signal().wait(),
        )
        .await
        .expect("kicked");
    }
}
