//! Caps on the sockets one credential may hold open at once on a node: a
//! visitor token (one chat session) and a socket token are bearer passes a
//! page can leak, so one of them cannot tie up a node's sockets.

use std::sync::Arc;

use dashmap::DashMap;

/// Sockets open at once per visitor token (a session's tabs and devices).
pub const PER_VISITOR_TOKEN: usize = 5;
/// Sockets open at once per socket token (an agent console's tabs).
pub const PER_SOCKET_TOKEN: usize = 20;

/// Open sockets by credential, on this node.
#[derive(Default)]
pub struct SocketSlots {
    open: Arc<DashMap<String, usize>>,
}

/// One open socket's place; dropping it (the socket ended, or its upgrade
/// never completed) frees the place.
pub struct Slot {
    open: Arc<DashMap<String, usize>>,
    key: String,
}

impl SocketSlots {
    /// A place for one more socket of `key`, unless `cap` are open already.
    pub fn take(&self, key: String, cap: usize) -> Option<Slot> {
        let mut open = self.open.entry(key.clone()).or_insert(0);
        if *open >= cap {
            return None;
        }
        *open += 1;
        drop(open);
        Some(Slot {
            open: Arc::clone(&self.open),
            key,
        })
    }

    /// Sockets of `key` open now.
    pub fn open(&self, key: &str) -> usize {
        self.open.get(key).map_or(0, |n| *n)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(mut open) = self.open.get_mut(&self.key) {
            *open = open.saturating_sub(1);
        }
        self.open.remove_if(&self.key, |_, open| *open == 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_holds_at_most_its_cap_until_a_slot_is_freed() {
        let slots = SocketSlots::default();
        let held: Vec<Slot> = (0..3)
            .map(|_| slots.take("a".into(), 3).expect("a free slot"))
            .collect();
        assert!(slots.take("a".into(), 3).is_none());
        assert!(
            slots.take("b".into(), 3).is_some(),
            "other keys count alone"
        );
        drop(held);
        assert_eq!(slots.open("a"), 0);
        assert!(slots.take("a".into(), 3).is_some());
    }
}
