//! Reading the client only when it may have sent something.
//!
//! The socket's loop wakes for every frame the hub queues to it, and each
//! turn of the loop polls the client's side as well. tungstenite prepares
//! its read buffer (zero-filling up to 4 KiB) before every read attempt,
//! even one that finds nothing, so under fan-out most of a delivery's work
//! was preparing reads of a silent client. The gate asks the client's side
//! again only after the waker that side registered has fired (or after it
//! last produced a message, since more may be buffered), which is exactly
//! when a read can find something new.
//!
//! Hand-written because it sits between our loop and the library's stream:
//! no crate offers "poll a stream only after its own waker fired".

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use axum::extract::ws::{Message, WebSocket};
use futures::Stream;
use futures::task::AtomicWaker;

/// Whether the client's side of one socket is worth reading, shared with
/// the waker that side registers.
#[derive(Debug)]
pub struct PeerGate {
    /// Set when the client's side woke us (or produced a message), cleared
    /// when we read it.
    readable: AtomicBool,
    /// The socket task's waker, woken in turn.
    task: AtomicWaker,
}

impl PeerGate {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            // Bytes may already be buffered from the upgrade: read once.
            readable: AtomicBool::new(true),
            task: AtomicWaker::new(),
        })
    }
}

impl Wake for PeerGate {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.readable.store(true, Ordering::Release);
        self.task.wake();
    }
}

/// The next message from the client, read through its gate.
pub async fn next_message(
    gate: &Arc<PeerGate>,
    ws: &mut WebSocket,
) -> Option<Result<Message, axum::Error>> {
    std::future::poll_fn(|cx| poll_gated(gate, ws, cx)).await
}

fn poll_gated<S: Stream + Unpin>(
    gate: &Arc<PeerGate>,
    ws: &mut S,
    cx: &mut Context<'_>,
) -> Poll<Option<S::Item>> {
    gate.task.register(cx.waker());
    if !gate.readable.swap(false, Ordering::AcqRel) {
        return Poll::Pending;
    }
    // The client's side registers this waker when it has nothing: its
    // wake both marks the gate and wakes the task.
    let waker = Waker::from(Arc::clone(gate));
    let polled = Pin::new(ws).poll_next(&mut Context::from_waker(&waker));
    if polled.is_ready() {
        // More may already be buffered behind this message.
        gate.readable.store(true, Ordering::Release);
    }
    polled
}

/// Which of a socket's two sources it looks at first, its hub queue or its
/// peer. The queue first, so a frame the queue woke the socket for is
/// written before anything else; the peer is looked at (through its gate)
/// when the queue is empty, before the socket waits. But a socket whose
/// queue never empties (a long burst) would then never read its peer, so
/// after `BATCHES_BEFORE_READ` batches in a row without a look at the peer,
/// the peer goes first once.
#[derive(Default)]
pub struct Turns {
    batches_unread: u8,
}

const BATCHES_BEFORE_READ: u8 = 4;

impl Turns {
    pub fn peer_first(&self) -> bool {
        self.batches_unread >= BATCHES_BEFORE_READ
    }

    /// Notes one turn of the loop: whether it looked at the peer.
    pub fn took(&mut self, peer_looked_at: bool) {
        self.batches_unread = match peer_looked_at {
            true => 0,
            false => self.batches_unread.saturating_add(1),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client's side that counts its reads and keeps the waker it was
    /// last given, as a socket's registration does.
    #[derive(Default)]
    struct FakePeer {
        reads: usize,
        waiting: Vec<u8>,
        registered: Option<Waker>,
    }

    impl Stream for FakePeer {
        type Item = u8;
        fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<u8>> {
            self.reads += 1;
            match self.waiting.pop() {
                Some(byte) => Poll::Ready(Some(byte)),
                None => {
                    self.registered = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        }
    }

    fn poll_once(gate: &Arc<PeerGate>, peer: &mut FakePeer) -> Poll<Option<u8>> {
        poll_gated(gate, peer, &mut Context::from_waker(Waker::noop()))
    }

    #[test]
    fn a_silent_peer_is_not_read_again_until_its_waker_fires() {
        let (gate, mut peer) = (PeerGate::new(), FakePeer::default());
        assert!(poll_once(&gate, &mut peer).is_pending());
        assert!(poll_once(&gate, &mut peer).is_pending());
        assert_eq!(peer.reads, 1);
    }

    #[test]
    fn a_peer_is_read_again_once_its_waker_fires() {
        let (gate, mut peer) = (PeerGate::new(), FakePeer::default());
        assert!(poll_once(&gate, &mut peer).is_pending());
        peer.waiting.push(7);
        peer.registered
            .take()
            .expect("the peer kept a waker")
            .wake();
        assert_eq!(poll_once(&gate, &mut peer), Poll::Ready(Some(7)));
    }

    #[test]
    fn a_peer_that_produced_a_message_is_read_again_without_a_wake() {
        let (gate, mut peer) = (PeerGate::new(), FakePeer::default());
        peer.waiting = vec![2, 1];
        assert_eq!(poll_once(&gate, &mut peer), Poll::Ready(Some(1)));
        assert_eq!(poll_once(&gate, &mut peer), Poll::Ready(Some(2)));
    }

    #[test]
    fn the_peer_goes_first_after_batches_written_without_a_look_at_it() {
        let mut turns = Turns::default();
        for _ in 0..BATCHES_BEFORE_READ {
            assert!(!turns.peer_first());
            turns.took(false);
        }
        assert!(turns.peer_first());
        turns.took(true);
        assert!(!turns.peer_first());
    }
}
