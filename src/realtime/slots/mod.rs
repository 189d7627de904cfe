//! Caps on the sockets one credential may hold open at once: a visitor
//! token (one chat session) and a socket token are bearer passes a page can
//! leak, so one of them cannot tie up the service's sockets.
//!
//! Each node counts its own sockets; with Redis the count spans every node
//! too (`redis`). A socket needs a place in both. While Redis does not
//! answer, the node's own count decides (and the socket is counted on its
//! node only), so an outage refuses nothing the node would have accepted.

mod redis;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use dashmap::DashMap;
use uuid::Uuid;

pub use self::redis::RedisSlots;

/// Sockets open at once per visitor token (a session's tabs and devices).
pub const PER_VISITOR_TOKEN: usize = 5;
/// Sockets open at once per socket token (an agent console's tabs).
pub const PER_SOCKET_TOKEN: usize = 20;
/// How long a socket's place in Redis outlives its last refresh: the place
/// of a socket whose node died frees itself after this long.
pub const SHARED_PLACE_TTL: Duration = Duration::from_secs(45);

/// Open sockets by credential: this node's count, and Redis's if configured.
pub struct SocketSlots {
    open: Arc<DashMap<String, usize>>,
    redis: Option<Arc<RedisSlots>>,
    /// Whether the last Redis call failed (logged once per outage).
    degraded: Arc<AtomicBool>,
}

/// One open socket's place; dropping it (the socket ended, or its upgrade
/// never completed) frees the place.
pub struct Slot {
    open: Arc<DashMap<String, usize>>,
    key: String,
    shared: Option<SharedPlace>,
}

/// A socket's member in its credential's Redis set.
struct SharedPlace {
    redis: Arc<RedisSlots>,
    member: String,
    ttl: Duration,
    degraded: Arc<AtomicBool>,
}

impl SocketSlots {
    pub fn new(redis: Option<RedisSlots>) -> Self {
        SocketSlots {
            open: Arc::default(),
            redis: redis.map(Arc::new),
            degraded: Arc::default(),
        }
    }

    /// The Redis side, if configured (tests inspect its keys).
    pub fn redis(&self) -> Option<&RedisSlots> {
        self.redis.as_deref()
    }

    /// A place for one more socket of `key`, unless `cap` are open already
    /// (on any node, with Redis). `refresh_every` is how often the socket
    /// will call `Slot::refresh`; its shared place lives at least twice that.
    pub async fn take(&self, key: String, cap: usize, refresh_every: Duration) -> Option<Slot> {
        let mut slot = self.take_local(key, cap)?;
        let Some(redis) = &self.redis else {
            return Some(slot);
        };
        let member = Uuid::now_v7().to_string();
        let ttl = SHARED_PLACE_TTL.max(refresh_every.saturating_mul(2));
        match redis.take(&slot.key, &member, cap, ttl).await {
            Ok(false) => None,
            Ok(true) => {
                note_success(&self.degraded);
                slot.shared = Some(SharedPlace {
                    redis: Arc::clone(redis),
                    member,
                    ttl,
                    degraded: Arc::clone(&self.degraded),
                });
                Some(slot)
            }
            Err(error) => {
                note_failure(&self.degraded, &error);
                Some(slot)
            }
        }
    }

    fn take_local(&self, key: String, cap: usize) -> Option<Slot> {
        let mut open = self.open.entry(key.clone()).or_insert(0);
        if *open >= cap {
            return None;
        }
        *open += 1;
        drop(open);
        Some(Slot {
            open: Arc::clone(&self.open),
            key,
            shared: None,
        })
    }

    /// Sockets of `key` open now on this node.
    pub fn open(&self, key: &str) -> usize {
        self.open.get(key).map_or(0, |n| *n)
    }
}

impl Default for SocketSlots {
    fn default() -> Self {
        SocketSlots::new(None)
    }
}

impl Slot {
    /// Keeps the socket's shared place from expiring; call it more often
    /// than the `refresh_every` given to `take`.
    pub async fn refresh(&self) {
        let Some(place) = &self.shared else { return };
        match place
            .redis
            .refresh(&self.key, &place.member, place.ttl)
            .await
        {
            Ok(()) => note_success(&place.degraded),
            Err(error) => note_failure(&place.degraded, &error),
        }
    }
}

fn note_success(degraded: &AtomicBool) {
    if degraded.swap(false, Ordering::Relaxed) {
        tracing::info!("Redis socket caps reachable again");
    }
}

fn note_failure(degraded: &AtomicBool, error: &anyhow::Error) {
    if !degraded.swap(true, Ordering::Relaxed) {
        tracing::warn!(%error, "Redis socket caps unreachable; counting this node's sockets only");
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(mut open) = self.open.get_mut(&self.key) {
            *open = open.saturating_sub(1);
        }
        self.open.remove_if(&self.key, |_, open| *open == 0);
        // Freed in the background; if that fails the place expires instead.
        if let Some(place) = self.shared.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let key = std::mem::take(&mut self.key);
            runtime.spawn(async move {
                if let Err(error) = place.redis.release(&key, &place.member).await {
                    note_failure(&place.degraded, &error);
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_holds_at_most_its_cap_until_a_slot_is_freed() {
        let slots = SocketSlots::default();
        let held: Vec<Slot> = (0..3)
            .map(|_| slots.take_local("a".into(), 3).expect("a free slot"))
            .collect();
        assert!(slots.take_local("a".into(), 3).is_none());
        assert!(
            slots.take_local("b".into(), 3).is_some(),
            "other keys count alone"
        );
        drop(held);
        assert_eq!(slots.open("a"), 0);
        assert!(slots.take_local("a".into(), 3).is_some());
    }
}
