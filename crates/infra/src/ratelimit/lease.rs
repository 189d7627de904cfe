//! Leased allowance for the Redis limiter: when a node asks Redis for a
//! key's requests it takes a slice of them (1% of the limit, at least one),
//! spends them itself, and gives back what it has not spent when the lease
//! ends. Most requests are then decided in the node's memory, and Redis
//! sees one call per slice instead of one per request.
//!
//! A lease is paid for in Redis before a request spends it, so the nodes
//! together never allow more than the limit. The price is on the other
//! side: while a node holds unspent requests of an almost empty allowance,
//! another node may refuse requests that would fit. At most one slice less
//! one per node is held that way, and only until the lease ends
//! ([`LIFETIME`]). A key's headers on one node show what that node knows:
//! another node's spending appears at its next lease. A limit under 200 has
//! a slice of one request, which is the exact per-request check.

use std::borrow::Borrow;
use std::hash::Hash;
use std::time::{Duration, Instant};

use uuid::Uuid;

use super::HotMap;
use super::gcra::{Decision, interval_us};
use crate::time::Clock;

/// How long a node may hold a leased slice before returning what is left.
pub const LIFETIME: Duration = Duration::from_millis(500);

/// The slice is the limit divided by this (1%).
const SLICE_DIVISOR: u64 = 100;

/// Requests one lease of a key with `limit` takes beyond the request that
/// asked for it.
pub fn spare_per_lease(limit: u64) -> u64 {
    (limit / SLICE_DIVISOR).max(1) - 1
}

/// Whose allowance a lease is part of.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Bucket {
    ApiKey(Uuid),
    Named(String),
}

/// Requests a node took from Redis and has not spent yet, with what Redis
/// said of the key when it granted them.
#[derive(Debug, Clone)]
pub struct Lease {
    /// Leased requests not spent yet.
    pub unspent: u64,
    pub limit: u64,
    pub window_us: u64,
    /// What Redis reported right after the grant (the unspent requests
    /// already taken off).
    remaining: u64,
    reset_us: u64,
    granted: Instant,
    /// The key's TAT in Redis's clock right after the grant; a return never
    /// gives back more than lies between it and Redis's "now".
    pub tat: u64,
}

/// What Redis answered for one lease request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    /// Requests granted (0 when the allowance is spent).
    pub granted: u64,
    pub remaining: u64,
    pub reset_us: u64,
    /// µs until one more request fits (0 when it fits now).
    pub retry_us: u64,
    pub tat: u64,
}

impl Lease {
    pub fn new(unspent: u64, limit: u64, window_us: u64, grant: &Grant, now: Instant) -> Self {
        Lease {
            unspent,
            limit,
            window_us,
            remaining: grant.remaining,
            reset_us: grant.reset_us,
            granted: now,
            tat: grant.tat,
        }
    }

    /// Whether this lease may serve requests of `limit` per `window_us` at
    /// `now`: it has not ended and the key's limit has not changed.
    pub fn serves(&self, limit: u64, window_us: u64, now: Instant) -> bool {
        self.limit == limit && self.window_us == window_us && !self.ended(now)
    }

    /// Whether the lease's [`LIFETIME`] is over at `now`.
    fn ended(&self, now: Instant) -> bool {
        now.saturating_duration_since(self.granted) >= LIFETIME
    }

    /// Spends one leased request, with the headers one node alone would see.
    fn spend(&mut self, now: Instant) -> Option<Decision> {
        self.unspent = self.unspent.checked_sub(1)?;
        let interval = interval_us(self.limit, self.window_us);
        let elapsed = u64::try_from(now.saturating_duration_since(self.granted).as_micros())
            .unwrap_or(u64::MAX);
        // Time refills the bucket one request per interval; the unspent
        // requests are still the node's, not spent.
        let remaining = (self.remaining + self.unspent + elapsed / interval).min(self.limit - 1);
        // At least the interval this request itself costs, as a GCRA step
        // on a bucket time has refilled would report.
        let reset_us = self
            .reset_us
            .saturating_sub(self.unspent.saturating_mul(interval))
            .saturating_sub(elapsed)
            .max(interval);
        Some(Decision::from_micros(
            true, self.limit, remaining, reset_us, 0,
        ))
    }
}

/// The decisions a grant of `grant.granted` makes for `asked` requests, in
/// order: the first `min(granted, asked)` allowed, the rest refused; and
/// the requests left over for a lease.
pub fn share_grant(
    grant: &Grant,
    limit: u64,
    window_us: u64,
    asked: usize,
) -> (Vec<Decision>, u64) {
    let interval = interval_us(limit, window_us);
    let asked_u64 = u64::try_from(asked).unwrap_or(u64::MAX);
    let allowed = grant.granted.min(asked_u64);
    let mut decisions = Vec::with_capacity(asked);
    for n in 0..asked_u64 {
        if n < allowed {
            // Requests granted after this one are still unspent.
            let later = grant.granted - n - 1;
            decisions.push(Decision::from_micros(
                true,
                limit,
                grant.remaining + later,
                grant
                    .reset_us
                    .saturating_sub(later.saturating_mul(interval)),
                0,
            ));
        } else {
            decisions.push(Decision::from_micros(
                false,
                limit,
                0,
                grant.reset_us,
                grant.retry_us,
            ));
        }
    }
    (decisions, grant.granted - allowed)
}

/// Every lease a node holds, by bucket.
pub struct Leases {
    api_keys: HotMap<Uuid, Lease>,
    named: HotMap<String, Lease>,
    /// Lifetimes are measured on the node's clock (its monotonic side), so
    /// a test ends a lease by advancing it.
    clock: Clock,
}

impl Leases {
    pub fn new(clock: Clock) -> Self {
        Leases {
            api_keys: HotMap::default(),
            named: HotMap::default(),
            clock,
        }
    }

    /// Now, as lease lifetimes are measured.
    pub fn now(&self) -> Instant {
        self.clock.instant()
    }

    /// Spends one leased request of API key `key_id`, if this node holds one
    /// that serves; `None` when Redis must be asked.
    pub fn spend_api_key(&self, key_id: Uuid, limit: u64, window_us: u64) -> Option<Decision> {
        spend_in(&self.api_keys, &key_id, limit, window_us, self.now())
    }

    /// The same for a named bucket.
    pub fn spend_named(&self, name: &str, limit: u64, window_us: u64) -> Option<Decision> {
        spend_in(&self.named, name, limit, window_us, self.now())
    }

    pub fn spend(&self, bucket: &Bucket, limit: u64, window_us: u64) -> Option<Decision> {
        match bucket {
            Bucket::ApiKey(id) => self.spend_api_key(*id, limit, window_us),
            Bucket::Named(name) => self.spend_named(name, limit, window_us),
        }
    }

    /// Takes `bucket`'s lease away if it no longer serves `limit` per
    /// `window_us` (ended, or the limit changed); the caller returns its
    /// unspent requests to Redis.
    pub fn take_stale(&self, bucket: &Bucket, limit: u64, window_us: u64) -> Option<Lease> {
        let now = self.now();
        let stale = |lease: &Lease| !lease.serves(limit, window_us, now);
        match bucket {
            Bucket::ApiKey(id) => self.api_keys.remove_if(id, |_, l| stale(l)).map(|(_, l)| l),
            Bucket::Named(name) => self.named.remove_if(name, |_, l| stale(l)).map(|(_, l)| l),
        }
    }

    pub fn insert(&self, bucket: Bucket, lease: Lease) {
        match bucket {
            Bucket::ApiKey(id) => self.api_keys.insert(id, lease),
            Bucket::Named(name) => self.named.insert(name, lease),
        };
    }

    /// Removes every lease that has ended; those with unspent requests are
    /// returned, for the caller to give back to Redis.
    pub fn take_ended(&self) -> Vec<(Bucket, Lease)> {
        let now = self.now();
        let mut ended = Vec::new();
        take_ended_in(&self.api_keys, now, &mut ended, |id| Bucket::ApiKey(*id));
        take_ended_in(&self.named, now, &mut ended, |name| {
            Bucket::Named(name.clone())
        });
        ended
    }
}

fn spend_in<K, Q>(
    map: &HotMap<K, Lease>,
    key: &Q,
    limit: u64,
    window_us: u64,
    now: Instant,
) -> Option<Decision>
where
    K: Borrow<Q> + Eq + Hash,
    Q: Eq + Hash + ?Sized,
{
    let mut lease = map.get_mut(key)?;
    if !lease.serves(limit, window_us, now) {
        return None;
    }
    lease.spend(now)
}

fn take_ended_in<K: Eq + Hash>(
    map: &HotMap<K, Lease>,
    now: Instant,
    ended: &mut Vec<(Bucket, Lease)>,
    bucket: impl Fn(&K) -> Bucket,
) {
    map.retain(|key, lease| {
        let over = lease.ended(now);
        if over && lease.unspent > 0 {
            ended.push((bucket(key), lease.clone()));
        }
        !over
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR_US: u64 = 3_600_000_000;

    /// Redis's answer to a fresh key of 1,000 an hour asked for 10.
    fn ten_of_a_thousand() -> Grant {
        Grant {
            granted: 10,
            remaining: 990,
            reset_us: 36_000_000,
            retry_us: 0,
            tat: 36_000_000,
        }
    }

    #[test]
    fn a_slice_is_one_percent_of_the_limit_and_at_least_one_request() {
        assert_eq!(spare_per_lease(1000), 9);
        assert_eq!(spare_per_lease(199), 0);
        assert_eq!(spare_per_lease(5), 0);
    }

    #[test]
    fn one_node_spending_its_lease_sees_the_exact_headers() {
        let (decisions, left) = share_grant(&ten_of_a_thousand(), 1000, HOUR_US, 1);
        assert_eq!(left, 9);
        assert_eq!((decisions[0].remaining, decisions[0].reset_secs), (999, 4));
        let now = Instant::now();
        let mut lease = Lease::new(left, 1000, HOUR_US, &ten_of_a_thousand(), now);
        let spent: Vec<(u64, u64)> = (0..9)
            .map(|_| lease.spend(now).map(|d| (d.remaining, d.reset_secs)))
            .collect::<Option<_>>()
            .expect("nine leased requests");
        // The same as nine more GCRA steps of one request: 998 left after
        // 7.2 s of debt, down to 990 after 36 s.
        assert_eq!(spent.first(), Some(&(998, 8)));
        assert_eq!(spent.last(), Some(&(990, 36)));
        assert_eq!(lease.spend(now), None);
    }

    #[test]
    fn a_request_from_a_lease_reports_at_least_its_own_interval_to_reset() {
        let granted = Instant::now();
        let mut lease = Lease::new(9, 1000, HOUR_US, &ten_of_a_thousand(), granted);
        // An hour on, time has refilled the bucket; the request still costs
        // 3.6 s of it.
        let decision = lease.spend(granted + Duration::from_secs(3600));
        assert_eq!(decision.map(|d| d.reset_secs), Some(4));
    }

    #[test]
    fn a_grant_smaller_than_the_batch_refuses_the_rest() {
        let grant = Grant {
            granted: 2,
            remaining: 0,
            reset_us: HOUR_US,
            retry_us: 3_600_000,
            tat: HOUR_US,
        };
        let (decisions, left) = share_grant(&grant, 1000, HOUR_US, 5);
        let allowed: Vec<bool> = decisions.iter().map(|d| d.allowed).collect();
        assert_eq!(allowed, [true, true, false, false, false]);
        assert_eq!(decisions[4].retry_after_secs, 4);
        assert_eq!(left, 0);
    }

    #[test]
    fn a_lease_serves_only_its_own_limit_and_only_while_it_lasts() {
        let granted = Instant::now();
        let lease = Lease::new(9, 1000, HOUR_US, &ten_of_a_thousand(), granted);
        assert!(lease.serves(1000, HOUR_US, granted));
        assert!(!lease.serves(500, HOUR_US, granted));
        assert!(!lease.serves(1000, HOUR_US, granted + LIFETIME));
    }
}
