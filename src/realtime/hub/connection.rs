//! Registering a socket with the hub: its connection, which subscribes to
//! topics and hands the socket its queued frames, and its kick signal.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::task::{Context, Poll};

use super::{Close, Frame, Holder, Holding, Hub, SocketShare, Subscriber, TicketReads};
use crate::realtime::protocol::Topic;

impl Hub {
    /// Registers a socket holding `holder`'s credentials, allowed to write
    /// while `may_write` and reading `ticket_reads` of the ticket channels.
    /// The returned connection unregisters it (and all its subscriptions)
    /// when dropped.
    pub fn connect(
        self: &Arc<Self>,
        holder: Holder,
        may_write: bool,
        ticket_reads: TicketReads,
    ) -> Connection {
        self.connections.fetch_add(1, Ordering::Relaxed);
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let socket = Arc::new(SocketShare {
            may_write: AtomicBool::new(may_write),
            ticket_reads: AtomicU8::new(ticket_reads as u8),
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

    /// What the socket's credentials read of tickets now (a key's ticket
    /// scopes can be cut while the socket is open).
    pub fn ticket_reads(&self) -> TicketReads {
        self.socket.ticket_reads()
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
