//! The in-process limiter: one GCRA state (TAT) per key in a dashmap. Used
//! alone on a single node, and by every node as its fallback when Redis is
//! unreachable. API keys, spent on every authenticated request, have their
//! own map keyed by the key id, so that path formats and hashes no string.

use std::borrow::Borrow;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::time::Clock;

use uuid::Uuid;

use super::gcra::{self, Decision};
use super::{HotMap, Limiter};

/// Entries are swept every this many checks (a full bucket needs no entry).
const SWEEP_EVERY: u64 = 4096;

pub struct LocalLimiter {
    /// Time is read from the node's clock (its monotonic side), so a test
    /// moves buckets forward by advancing it.
    clock: Clock,
    epoch: Instant,
    /// Named buckets (`authfail:<ip>`, `visitor:<id>`, …).
    tats: HotMap<String, u64>,
    /// The buckets of API keys.
    key_tats: HotMap<Uuid, u64>,
    checks: AtomicU64,
}

impl LocalLimiter {
    pub fn new(clock: Clock) -> Self {
        LocalLimiter {
            epoch: clock.instant(),
            clock,
            tats: HotMap::default(),
            key_tats: HotMap::default(),
            checks: AtomicU64::new(0),
        }
    }

    fn now_us(&self) -> u64 {
        // +1 so that "now" is never the zero of a fresh bucket.
        let elapsed = self.clock.instant().saturating_duration_since(self.epoch);
        u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX / 2) + 1
    }

    /// Spends one request of `key`'s allowance (`limit` per `window`).
    pub fn spend(&self, key: &str, limit: u64, window: Duration) -> Decision {
        self.spend_in(&self.tats, key, limit, window)
    }

    /// Spends one request of the allowance of API key `key_id`.
    pub fn spend_api_key(&self, key_id: Uuid, limit: u64, window: Duration) -> Decision {
        self.spend_in(&self.key_tats, &key_id, limit, window)
    }

    fn spend_in<K, Q>(
        &self,
        tats: &HotMap<K, u64>,
        key: &Q,
        limit: u64,
        window: Duration,
    ) -> Decision
    where
        K: Borrow<Q> + Eq + Hash,
        Q: ToOwned<Owned = K> + Eq + Hash + ?Sized,
    {
        let now = self.now_us();
        let window_us = u64::try_from(window.as_micros()).unwrap_or(u64::MAX / 4);
        let decision = match tats.get_mut(key) {
            Some(mut tat) => {
                let (decision, next) = gcra::step(now, Some(*tat), limit, window_us);
                if let Some(next) = next {
                    *tat = next;
                }
                decision
            }
            None => {
                let (decision, next) = gcra::step(now, None, limit, window_us);
                if let Some(next) = next {
                    tats.insert(key.to_owned(), next);
                }
                decision
            }
        };
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.tats.retain(|_, tat| *tat > now);
            self.key_tats.retain(|_, tat| *tat > now);
        }
        decision
    }
}

impl Limiter for LocalLimiter {
    async fn check(&self, key: &str, limit: u64, window: Duration) -> anyhow::Result<Decision> {
        Ok(self.spend(key, limit, window))
    }

    async fn check_api_key(
        &self,
        key_id: Uuid,
        limit: u64,
        window: Duration,
    ) -> anyhow::Result<Decision> {
        Ok(self.spend_api_key(key_id, limit, window))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_have_separate_budgets() {
        let limiter = LocalLimiter::new(Clock::default());
        let hour = Duration::from_secs(3600);
        assert!(limiter.spend("a", 1, hour).allowed);
        assert!(!limiter.spend("a", 1, hour).allowed);
        assert!(limiter.spend("b", 1, hour).allowed);
    }

    #[test]
    fn an_api_key_has_its_own_budget() {
        let limiter = LocalLimiter::new(Clock::default());
        let hour = Duration::from_secs(3600);
        let key_id = Uuid::now_v7();
        assert!(limiter.spend_api_key(key_id, 1, hour).allowed);
        assert!(!limiter.spend_api_key(key_id, 1, hour).allowed);
        assert!(limiter.spend_api_key(Uuid::now_v7(), 1, hour).allowed);
    }
}
