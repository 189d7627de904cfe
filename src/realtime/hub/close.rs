//! Closing sockets from the hub: those whose holder's credentials changed
//! (and a key's `chat:write` or ticket scopes taken or given), and all of
//! them at shutdown.

use std::sync::atomic::Ordering;

use uuid::Uuid;

use super::{Close, Holder, Hub, TicketReads};

impl Hub {
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
                Holder::Key { .. } | Holder::Agent { .. } => close,
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

    /// Lets the local sockets of `key_id` write (`chat:write`) or not, and
    /// read `tickets` of the ticket channels (from the next frame queued).
    pub fn set_key_rights(&self, key_id: Uuid, may_write: bool, tickets: TicketReads) {
        self.set_rights_where(
            |h| matches!(h, Holder::Key { key_id: k, .. } if *k == key_id),
            may_write,
            tickets,
        );
    }

    /// The same for the local sockets of agent session `session_id` (its
    /// role's scopes were changed).
    pub fn set_session_rights(&self, session_id: Uuid, may_write: bool, tickets: TicketReads) {
        self.set_rights_where(
            |h| matches!(h, Holder::Agent { session_id: s, .. } if *s == session_id),
            may_write,
            tickets,
        );
    }

    fn set_rights_where(
        &self,
        matches: impl Fn(&Holder) -> bool,
        may_write: bool,
        tickets: TicketReads,
    ) {
        self.credential_changes.fetch_add(1, Ordering::AcqRel);
        for holding in self.holders.iter() {
            if matches(&holding.holder) {
                holding.socket.may_write.store(may_write, Ordering::Release);
                let reads = tickets as u8;
                holding.socket.ticket_reads.store(reads, Ordering::Release);
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
        // A set: every visitor socket may be a holder of its own.
        let mut holders = std::collections::HashSet::new();
        for holding in self.holders.iter() {
            if !holding.socket.kick.is_raised() {
                holders.insert(holding.holder);
            }
        }
        holders.into_iter().collect()
    }
}
