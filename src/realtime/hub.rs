//! The hub: this node's sockets and the channels they subscribe to. It knows
//! nothing of other nodes (the bus brings their events) nor of the protocol
//! (frames arrive serialised). Each event is serialised once and the same
//! bytes are queued to every subscribed socket; each socket's queue is
//! bounded, and a socket whose queue overflows is kicked (closed with 1013)
//! rather than buffered without end. Each socket also registers whose
//! credentials it holds, so that a revoked key or a suspended company
//! closes its sockets (4401/4403) and a key's lost `chat:write` applies at
//! once.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll};

use axum::extract::ws::Utf8Bytes;
use dashmap::DashMap;
use futures::task::AtomicWaker;
use tokio::sync::Notify;
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
    /// By connection id: whose credentials each socket holds.
    holders: DashMap<u64, Holding>,
    connections: AtomicUsize,
    next_id: AtomicU64,
    /// Bumped by every credentials change applied here.
    credential_changes: AtomicU64,
    queue_capacity: usize,
    /// Shutdown has begun: every socket is closed, and one that registers
    /// now is closed at once.
    stopping: AtomicBool,
}

#[derive(Clone)]
struct Subscriber {
    conn: u64,
    socket: Arc<SocketShare>,
}

/// What the hub shares with one socket, in one allocation (every idle
/// socket pays for it): its queue of frames, its kick, and whether its
/// credentials allow writing. A queue of its own rather than a tokio
/// channel: a bounded `mpsc` allocates its cache-padded state and a first
/// block of slots for every socket before its first frame; an empty
/// `VecDeque` allocates nothing.
#[derive(Default)]
struct SocketShare {
    queue: Mutex<Queue>,
    /// Woken when a frame goes into an empty queue or the kick is raised.
    /// A waker slot rather than a `Notify`: the socket then polls its
    /// queue without a wait future of its own (every idle socket's task
    /// would hold one).
    queued: AtomicWaker,
    kick: Kick,
    may_write: AtomicBool,
}

#[derive(Default)]
struct Queue {
    frames: VecDeque<Arc<Frame>>,
    /// Released: takes no more frames.
    closed: bool,
}

/// How a frame offered to a socket's queue fared.
enum Offer {
    Taken,
    Full,
    Closed,
}

/// A queue emptied after a burst gives back its memory above this many
/// slots, so a socket that once fell behind costs what an idle one does.
const KEEP_SLOTS: usize = 16;

impl SocketShare {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        // Nothing panics while holding it; a poisoned queue is still whole.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn offer(&self, frame: Arc<Frame>, capacity: usize) -> Offer {
        let mut queue = self.queue();
        if queue.closed {
            return Offer::Closed;
        }
        if queue.frames.len() >= capacity {
            return Offer::Full;
        }
        let was_empty = queue.frames.is_empty();
        queue.frames.push_back(frame);
        drop(queue);
        if was_empty {
            self.queued.wake();
        }
        Offer::Taken
    }

    /// The next frame; `Err(closed)` when there is none.
    fn take(&self) -> Result<Arc<Frame>, bool> {
        let mut queue = self.queue();
        match queue.frames.pop_front() {
            Some(frame) => Ok(frame),
            None => {
                if queue.frames.capacity() > KEEP_SLOTS {
                    queue.frames = VecDeque::new();
                }
                Err(queue.closed)
            }
        }
    }

    fn close(&self) {
        let mut queue = self.queue();
        queue.closed = true;
        queue.frames = VecDeque::new();
    }

    /// Raises the kick and wakes the socket's wait on its queue too: an
    /// idle socket waits there alone, and only a write in progress waits on
    /// the kick itself.
    fn kick(&self, close: Close) {
        self.kick.raise(close);
        self.queued.wake();
    }
}

/// How the server closes a socket: a WebSocket close code and its reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Close {
    pub code: u16,
    pub reason: &'static str,
}

impl Close {
    pub const TOO_SLOW: Close = Close {
        code: 1013,
        reason: "Too slow: the socket's queue overflowed",
    };
    pub const SHUTDOWN: Close = Close {
        code: 1001,
        reason: "Server is shutting down",
    };
    /// The credentials stopped being valid.
    pub const fn unauthorized(reason: &'static str) -> Close {
        Close { code: 4401, reason }
    }
    /// The credentials are valid but no longer allowed (suspended company).
    pub const fn forbidden(reason: &'static str) -> Close {
        Close { code: 4403, reason }
    }
}

/// Raised once, with the first reason given: the socket must close.
#[derive(Default)]
struct Kick {
    raised: AtomicBool,
    close: OnceLock<Close>,
    notify: Notify,
}

impl Kick {
    fn raise(&self, close: Close) {
        let _ = self.close.set(close);
        if !self.raised.swap(true, Ordering::AcqRel) {
            // notify_one keeps a permit if the socket is not waiting yet.
            self.notify.notify_one();
        }
    }

    fn is_raised(&self) -> bool {
        self.raised.load(Ordering::Acquire)
    }

    /// How to close, once raised.
    fn raised(&self) -> Option<Close> {
        self.is_raised()
            .then(|| self.close.get().copied().unwrap_or(Close::TOO_SLOW))
    }
}

/// Whose credentials a socket holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// An API key, by header or through a socket token it minted.
    Key { company_id: Uuid, key_id: Uuid },
    /// A visitor token of one of the company's sessions.
    Visitor { company_id: Uuid },
}

impl Holder {
    pub fn company_id(&self) -> Uuid {
        match self {
            Holder::Key { company_id, .. } | Holder::Visitor { company_id } => *company_id,
        }
    }
}

struct Holding {
    holder: Holder,
    socket: Arc<SocketShare>,
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
            holders: DashMap::new(),
            connections: AtomicUsize::new(0),
            next_id: AtomicU64::new(1),
            credential_changes: AtomicU64::new(0),
            queue_capacity: queue_capacity.max(1),
            stopping: AtomicBool::new(false),
        }
    }

    /// Registers a socket holding `holder`'s credentials, allowed to write
    /// while `may_write`. The returned connection unregisters it (and all
    /// its subscriptions) when dropped.
    pub fn connect(self: &Arc<Self>, holder: Holder, may_write: bool) -> Connection {
        self.connections.fetch_add(1, Ordering::Relaxed);
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let socket = Arc::new(SocketShare {
            may_write: AtomicBool::new(may_write),
            ..SocketShare::default()
        });
        self.holders.insert(
            id,
            Holding {
                holder,
                socket: socket.clone(),
            },
        );
        // After the insert: `shut_down` sets the flag before it walks the
        // holders, so it closes this socket or this sees the flag.
        if self.stopping.load(Ordering::SeqCst) {
            socket.kick(Close::SHUTDOWN);
        }
        Connection {
            hub: self.clone(),
            id,
            socket,
            topics: Vec::new(),
            released: false,
        }
    }

    /// Closes every local socket whose holder matches, with `close` for
    /// key holders and `visitors` for visitor tokens (`None`: keep them).
    /// Nothing is queued to them from now on. Returns how many closed.
    pub fn close_where(
        &self,
        matches: impl Fn(&Holder) -> bool,
        close: Close,
        visitors: Option<Close>,
    ) -> usize {
        self.credential_changes.fetch_add(1, Ordering::AcqRel);
        let mut closed = 0;
        for holding in self.holders.iter() {
            if !matches(&holding.holder) {
                continue;
            }
            let close = match holding.holder {
                Holder::Key { .. } => close,
                Holder::Visitor { .. } => match visitors {
                    Some(close) => close,
                    None => continue,
                },
            };
            holding.socket.kick(close);
            closed += 1;
        }
        closed
    }

    /// Closes every local socket (1001), and from now on every socket that
    /// registers. Through each socket's kick rather than a shutdown signal
    /// every socket waits on: that wait would add its size to every idle
    /// socket's task.
    pub fn shut_down(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        for holding in self.holders.iter() {
            holding.socket.kick(Close::SHUTDOWN);
        }
    }

    /// Lets the local sockets of `key_id` write (`chat:write`) or not.
    pub fn set_may_write(&self, key_id: Uuid, allowed: bool) {
        self.credential_changes.fetch_add(1, Ordering::AcqRel);
        for holding in self.holders.iter() {
            if matches!(holding.holder, Holder::Key { key_id: k, .. } if k == key_id) {
                holding.socket.may_write.store(allowed, Ordering::Release);
            }
        }
    }

    /// How many credentials changes this hub has applied: a socket
    /// authenticated while one was applied re-checks its own credentials
    /// (the change may have passed before it registered).
    pub fn credential_changes(&self) -> u64 {
        self.credential_changes.load(Ordering::Acquire)
    }

    /// The distinct holders of the sockets open on this node.
    pub fn holders(&self) -> Vec<Holder> {
        let mut holders: Vec<Holder> = Vec::new();
        for holding in self.holders.iter() {
            if !holding.socket.kick.is_raised() && !holders.contains(&holding.holder) {
                holders.push(holding.holder);
            }
        }
        holders
    }

    /// Queues `frame` to every local socket subscribed to its topic; returns
    /// how many took it. A socket whose queue is full is kicked.
    pub fn dispatch(&self, frame: Arc<Frame>) -> usize {
        let Some(subscribers) = self.channels.get(&frame.topic) else {
            return 0;
        };
        let _timed = crate::metrics::ws_fanout_timer();
        let mut delivered = 0;
        for subscriber in subscribers.iter() {
            // A socket being closed gets nothing more.
            let socket = &subscriber.socket;
            if socket.kick.is_raised() {
                continue;
            }
            match socket.offer(frame.clone(), self.queue_capacity) {
                Offer::Taken => delivered += 1,
                Offer::Full => socket.kick(Close::TOO_SLOW),
                Offer::Closed => {}
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
pub struct KickSignal(Arc<SocketShare>);

impl KickSignal {
    /// Resolves, with how to close, once the socket must close: its queue
    /// overflowed or its credentials stopped being valid (cancel-safe).
    pub async fn wait(&self) -> Close {
        let kick = &self.0.kick;
        loop {
            if let Some(close) = kick.raised() {
                return close;
            }
            kick.notify.notified().await;
        }
    }
}

/// What a socket's queue gives it next.
#[derive(Debug)]
pub enum Next {
    Frame(Arc<Frame>),
    /// The socket must close so.
    Kicked(Close),
    /// The connection was released: nothing more will come.
    Released,
}

/// One socket's registration: its queue and its subscriptions.
pub struct Connection {
    hub: Arc<Hub>,
    pub id: u64,
    socket: Arc<SocketShare>,
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
                socket: self.socket.clone(),
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

    /// The next queued frame, or the kick once raised (before any frame
    /// still queued), or the end once released. Cancel-safe: a frame stays
    /// queued until it is returned.
    pub async fn recv(&self) -> Next {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    fn poll_recv(&self, cx: &mut Context<'_>) -> Poll<Next> {
        // Registered before looking: a frame queued or a kick raised after
        // the look wakes this task.
        self.socket.queued.register(cx.waker());
        if let Some(close) = self.socket.kick.raised() {
            return Poll::Ready(Next::Kicked(close));
        }
        match self.socket.take() {
            Ok(frame) => Poll::Ready(Next::Frame(frame)),
            Err(true) => Poll::Ready(Next::Released),
            Err(false) => Poll::Pending,
        }
    }

    /// A frame already queued, without waiting (to write a burst as one
    /// batch).
    pub fn try_recv(&self) -> Option<Arc<Frame>> {
        self.socket.take().ok()
    }

    /// A handle that resolves once the socket's queue has overflowed.
    pub fn kick_signal(&self) -> KickSignal {
        KickSignal(self.socket.clone())
    }

    pub fn is_subscribed(&self, topic: &Topic) -> bool {
        self.topics.contains(topic)
    }

    /// Whether the socket's credentials allow writing now (a key's
    /// `chat:write` can be taken away while the socket is open).
    pub fn may_write(&self) -> bool {
        self.socket.may_write.load(Ordering::Acquire)
    }

    /// Closes this socket as if its credentials had changed (its own key
    /// expiring, say).
    pub fn close(&self, close: Close) {
        self.socket.kick(close);
    }

    /// Unregisters the socket now: ends every subscription and drops the
    /// queued frames (a socket saying goodbye no longer counts). Also done
    /// on drop.
    pub fn release(&mut self) {
        if self.released {
            return;
        }
        self.released = true;
        self.hub.holders.remove(&self.id);
        for topic in std::mem::take(&mut self.topics) {
            self.hub.remove(&topic, self.id);
        }
        self.socket.close();
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

    fn visitor() -> Holder {
        Holder::Visitor {
            company_id: Uuid::nil(),
        }
    }

    fn frame_of(next: Next) -> Option<Arc<Frame>> {
        match next {
            Next::Frame(frame) => Some(frame),
            Next::Kicked(_) | Next::Released => None,
        }
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
        let mut test_socket = hub.connect(visitor(), false);
        let mut live_socket = hub.connect(visitor(), false);
        assert!(test_socket.subscribe(topic(Mode::Test)));
        assert!(!test_socket.subscribe(topic(Mode::Test)));
        live_socket.subscribe(topic(Mode::Live));
        assert_eq!(hub.dispatch(frame(topic(Mode::Test), "t")), 1);
        let got = frame_of(test_socket.recv().await).expect("frame");
        assert_eq!(got.text.as_str(), "t");
        assert!(live_socket.try_recv().is_none());
        assert!(test_socket.unsubscribe(&topic(Mode::Test)));
        assert_eq!(hub.subscribers(&topic(Mode::Test)), 0);
        assert_eq!(hub.connections(), 2);
        drop(live_socket);
        assert_eq!(hub.connections(), 1);
        assert_eq!(hub.subscribers(&topic(Mode::Live)), 0);
    }

    #[tokio::test]
    async fn a_socket_waiting_on_an_empty_queue_wakes_for_the_next_frame() {
        let hub = Arc::new(Hub::new(4));
        let mut socket = hub.connect(visitor(), false);
        socket.subscribe(topic(Mode::Test));
        let waiting =
            tokio::spawn(async move { frame_of(socket.recv().await).map(|f| f.text.clone()) });
        tokio::task::yield_now().await;
        assert_eq!(hub.dispatch(frame(topic(Mode::Test), "late")), 1);
        let got = tokio::time::timeout(std::time::Duration::from_secs(1), waiting)
            .await
            .expect("woken")
            .expect("task");
        assert_eq!(got.as_ref().map(|t| t.as_str()), Some("late"));
    }

    #[tokio::test]
    async fn a_released_connection_drops_its_queued_frames() {
        let hub = Arc::new(Hub::new(4));
        let mut socket = hub.connect(visitor(), false);
        socket.subscribe(topic(Mode::Test));
        hub.dispatch(frame(topic(Mode::Test), "queued"));
        socket.release();
        assert!(matches!(socket.recv().await, Next::Released));
    }

    #[tokio::test]
    async fn a_kick_wakes_a_socket_waiting_on_its_queue() {
        let hub = Arc::new(Hub::new(4));
        let socket = hub.connect(visitor(), false);
        let waiting = tokio::spawn(async move { socket.recv().await });
        tokio::task::yield_now().await;
        hub.shut_down();
        let next = tokio::time::timeout(std::time::Duration::from_secs(1), waiting)
            .await
            .expect("woken")
            .expect("task");
        assert!(matches!(next, Next::Kicked(Close::SHUTDOWN)), "{next:?}");
    }

    #[tokio::test]
    async fn a_kick_comes_before_the_frames_still_queued() {
        let hub = Arc::new(Hub::new(4));
        let mut socket = hub.connect(visitor(), false);
        socket.subscribe(topic(Mode::Test));
        hub.dispatch(frame(topic(Mode::Test), "queued"));
        socket.close(Close::SHUTDOWN);
        assert!(matches!(socket.recv().await, Next::Kicked(Close::SHUTDOWN)));
    }

    #[tokio::test]
    async fn shutting_down_closes_open_sockets_and_those_that_register_after() {
        let hub = Arc::new(Hub::new(4));
        let open = hub.connect(visitor(), false);
        hub.shut_down();
        let late = hub.connect(visitor(), false);
        assert_eq!(open.kick_signal().wait().await, Close::SHUTDOWN);
        assert_eq!(late.kick_signal().wait().await, Close::SHUTDOWN);
    }

    #[tokio::test]
    async fn a_full_queue_kicks_the_socket() {
        let hub = Arc::new(Hub::new(2));
        let mut socket = hub.connect(visitor(), false);
        socket.subscribe(topic(Mode::Test));
        for _ in 0..2 {
            assert_eq!(hub.dispatch(frame(topic(Mode::Test), "x")), 1);
        }
        assert_eq!(hub.dispatch(frame(topic(Mode::Test), "x")), 0);
        let close = tokio::time::timeout(
            std::time::Duration::from_secs(1),
            socket.kick_signal().wait(),
        )
        .await
        .expect("kicked");
        assert_eq!(close, Close::TOO_SLOW);
    }

    #[tokio::test]
    async fn closing_a_key_closes_its_sockets_and_stops_their_frames() {
        let hub = Arc::new(Hub::new(4));
        let (company_id, key_id) = (Uuid::now_v7(), Uuid::now_v7());
        let mut agent = hub.connect(Holder::Key { company_id, key_id }, true);
        let mut visitor = hub.connect(Holder::Visitor { company_id }, false);
        agent.subscribe(topic(Mode::Test));
        visitor.subscribe(topic(Mode::Test));
        hub.set_may_write(key_id, false);
        assert!(!agent.may_write());
        let revoked = Close::unauthorized("key revoked");
        let closed = hub.close_where(
            |h| matches!(h, Holder::Key { key_id: k, .. } if *k == key_id),
            revoked,
            None,
        );
        assert_eq!(closed, 1);
        assert_eq!(agent.kick_signal().wait().await, revoked);
        // Only the visitor takes the next frame.
        assert_eq!(hub.dispatch(frame(topic(Mode::Test), "after")), 1);
        assert!(agent.try_recv().is_none());
        assert_eq!(hub.holders(), vec![Holder::Visitor { company_id }]);
    }
}
