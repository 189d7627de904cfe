//! The hub: this node's sockets and the channels they subscribe to. It knows
//! nothing of other nodes (the bus brings their events) nor of the protocol
//! (frames arrive serialised). Each event is serialised once and the same
//! bytes are queued to every subscribed socket; each socket's queue is
//! bounded, and a socket whose queue overflows is kicked (closed with 1013)
//! rather than buffered without end. Each socket also registers whose
//! credentials it holds, so that a revoked key or a suspended company
//! closes its sockets (4401/4403) and a key's lost `chat:write`, or the
//! ticket scopes it loses, apply at once.
//!
//! Here are the hub, what it shares with each socket (its queue, its kick)
//! and the dispatch of frames; `connection` registers a socket and is what
//! the socket reads from, `close` closes sockets when credentials change
//! or the node shuts down.

mod close;
mod connection;

pub use connection::{Connection, KickSignal, Next};

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use axum::extract::ws::Utf8Bytes;
use dashmap::DashMap;
use futures::task::AtomicWaker;
use tokio::sync::Notify;
use uuid::Uuid;

use super::protocol::Topic;
use super::token::SecretFingerprint;
use crate::auth::{Scope, ScopeSet};

/// Frames a socket may have queued before it counts as too slow.
pub const QUEUE_CAPACITY: usize = 256;

/// One event, serialised once, shared by every socket it goes to.
#[derive(Debug)]
pub struct Frame {
    pub topic: Topic,
    /// The chat message this frame carries, if any (to drop a live copy of
    /// a message the socket has just replayed).
    pub message_id: Option<Uuid>,
    /// What a socket's credentials must read of tickets for it to get the
    /// frame (`Nothing` for every frame but the ticket channels').
    pub needs: TicketReads,
    pub text: Utf8Bytes,
}

/// What a socket's credentials read of tickets, in growing order: nothing,
/// the ticket channels' public events (`tickets:read`), also internal
/// notes (`tickets:write`, as comment search decides, or the `viewer`
/// role's grant). A key's scopes can
/// be cut while its sockets are open: the hub keeps each socket's current
/// reads and queues it only the frames they cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
#[repr(u8)]
pub enum TicketReads {
    #[default]
    Nothing = 0,
    Public = 1,
    Notes = 2,
}

impl TicketReads {
    /// What credentials holding `scopes` read of the ticket channels, with
    /// `notes` a role's grant of internal notes (the built-in `viewer`'s,
    /// a session's only: a key never has it). The one rule for the
    /// handshake and for a key's notice, so a socket's reads after a
    /// change are what a handshake then would give it.
    pub fn of(scopes: &ScopeSet, notes: bool) -> TicketReads {
        if !scopes.contains(Scope::TicketsRead) {
            TicketReads::Nothing
        } else if notes || ::tickets::model::reads_internal_notes(scopes) {
            TicketReads::Notes
        } else {
            TicketReads::Public
        }
    }

    fn from_u8(value: u8) -> TicketReads {
        match value {
            2 => TicketReads::Notes,
            1 => TicketReads::Public,
            _ => TicketReads::Nothing,
        }
    }
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
    /// A `TicketReads`, kept current like `may_write`.
    ticket_reads: AtomicU8,
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

    fn ticket_reads(&self) -> TicketReads {
        TicketReads::from_u8(self.ticket_reads.load(Ordering::Acquire))
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Holder {
    /// An API key, by header or through a socket token it minted.
    Key { company_id: Uuid, key_id: Uuid },
    /// An agent signed in by session cookie.
    Agent {
        company_id: Uuid,
        user_id: Uuid,
        session_id: Uuid,
    },
    /// A visitor token of one of the company's sessions, with what it said
    /// of the session at the handshake: a revocation (a newer nonce) or a
    /// rotation that retires its identity secret closes the socket.
    Visitor {
        company_id: Uuid,
        entity_id: Uuid,
        session_id: Uuid,
        nonce: i64,
        secret: Option<SecretFingerprint>,
    },
}

impl Holder {
    pub fn company_id(&self) -> Uuid {
        match self {
            Holder::Key { company_id, .. }
            | Holder::Agent { company_id, .. }
            | Holder::Visitor { company_id, .. } => *company_id,
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
            // A socket whose key lost a ticket scope keeps its
            // subscription but no longer gets what it cannot read.
            if frame.needs > TicketReads::Nothing && socket.ticket_reads() < frame.needs {
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
}

#[cfg(test)]
mod tests;
