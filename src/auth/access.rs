//! What authentication shares across requests: the key cache, the rate
//! limiters, the clients refused for failing too often, and when each key's
//! `lastUsedAt` was last written.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dashmap::DashMap;
use uuid::Uuid;

use super::Principal;
use super::cache::{Invalidation, KeyCache, TOPIC};
use super::ready::allowance;
use crate::config::Config;
use crate::db::Db;
use crate::error::ApiError;
use crate::keys::store as key_store;
use crate::ratelimit::client::client_key;
use crate::ratelimit::{self, Decision, Limiter, RateLimiter, RedisLimiter};
use crate::realtime::bus::Bus;
use crate::time::Timestamp;

/// `lastUsedAt` is written at most this often per key.
pub const LAST_USED_EVERY: Duration = Duration::from_secs(60);

/// Failed authentications allowed per client per failure window (a
/// minute unless a test lengthens it, `Config::auth_failure_window`).
pub const FAILURE_LIMIT: u64 = 100;

/// Clients refused for failing too often are swept past this many.
const BLOCKED_SWEEP_ABOVE: usize = 10_000;

/// Shared authentication state: the key cache and the rate limiters.
pub struct Access {
    pub keys: KeyCache,
    /// Agent sessions, by the digest of their cookie's secret.
    pub sessions: super::session::SessionCache,
    /// Failed sign-ins per account and client, and their lock-outs.
    pub sign_in_guard: crate::accounts::guard::SignInGuard,
    /// How long a session lasts idle.
    pub session_idle: Duration,
    /// The rate-limit header values of every response to an agent (their
    /// allowance is the same for all).
    pub agent_headers: crate::ratelimit::KeyHeaders,
    /// Per API key (by its id), per client for failures (`authfail:<ip>`)
    /// and per visitor session for socket messages (`visitor:<id>`).
    pub limiter: RateLimiter,
    /// The rate-limit window (an hour unless a test shortens it).
    pub window: Duration,
    /// The window of the `FAILURE_LIMIT` failures a client may make.
    failure_window: Duration,
    /// Clients the failure limit refused, until when: while there, keys
    /// they present are refused before the store lookup, without asking Redis.
    blocked: DashMap<IpAddr, Instant>,
    /// When this node last wrote `lastUsedAt` of each key.
    last_used: super::throttle::WriteThrottle,
    /// How many `lastUsedAt` writes this node has started and finished
    /// (they run after the response): what a test waits on before it
    /// looks at the stored value.
    last_used_writes: Arc<std::sync::atomic::AtomicU64>,
    /// The node's clock: blocks and the once-a-minute write are measured
    /// on its monotonic side, which a test moves.
    clock: crate::time::Clock,
}

impl Access {
    /// The limiters read `clock` (the node's).
    pub fn new(
        config: &Config,
        redis: Option<crate::redis_conn::RedisConn>,
        clock: &crate::time::Clock,
    ) -> Self {
        let sign_in_guard = crate::accounts::guard::SignInGuard::new(
            redis.clone(),
            &config.redis_prefix,
            clock.clone(),
        );
        let redis = redis.map(|conn| RedisLimiter::new(conn, &config.redis_prefix, clock.clone()));
        Access {
            keys: KeyCache::new(),
            sessions: super::session::SessionCache::new(),
            sign_in_guard,
            session_idle: config.session_idle,
            agent_headers: crate::ratelimit::KeyHeaders::new(
                allowance(super::session::AGENT_RATE_LIMIT),
                config.rate_window,
            ),
            limiter: RateLimiter::new(redis, clock.clone()),
            window: config.rate_window,
            failure_window: config.auth_failure_window,
            blocked: DashMap::new(),
            last_used: super::throttle::WriteThrottle::default(),
            last_used_writes: Arc::default(),
            clock: clock.clone(),
        }
    }

    /// Forgets `what` in both caches on this node.
    pub fn apply(&self, what: Invalidation) {
        self.keys.apply(what);
        match what {
            Invalidation::Session(id) => self.sessions.forget_session(id),
            Invalidation::User(id) => self.sessions.forget_user(id),
            Invalidation::Company(id) => self.sessions.forget_company(id),
            Invalidation::All => self.sessions.clear(),
            Invalidation::Key(_) | Invalidation::KeyCreated => {}
        }
    }

    /// Forgets `what` in both caches on this node at once and on every
    /// other node through `bus` (for what concerns sessions too: a session
    /// or a user's sessions ended, a company suspended). Call after the
    /// change has committed.
    pub async fn invalidate(&self, bus: &Bus, what: Invalidation) {
        self.apply(what);
        bus.publish(TOPIC, what.encode()).await;
    }

    /// The node's clock, which the limiters and these checks read.
    pub fn clock(&self) -> &crate::time::Clock {
        &self.clock
    }

    /// How many `lastUsedAt` writes this node has finished, failed ones
    /// included.
    pub fn last_used_writes(&self) -> u64 {
        self.last_used_writes
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Spends one request of the key's allowance.
    pub async fn check_rate(&self, principal: &Principal) -> Decision {
        self.check_key_rate(principal.key_id, principal.rate_limit)
            .await
    }

    /// Spends one request of the allowance of key `key_id`, whose limit is
    /// `rate_limit` per window (a socket's frames spend it too).
    pub async fn check_key_rate(&self, key_id: Uuid, rate_limit: i64) -> Decision {
        let limit = allowance(rate_limit);
        match self.limiter.check_api_key(key_id, limit, self.window).await {
            Ok(decision) => decision,
            // The node's limiter never fails; an allowance keeps serving.
            Err(_) => Decision::from_micros(true, limit, limit - 1, 0, 0),
        }
    }

    /// The 429 for a client this node has seen go over the failure limit,
    /// until its next failure would be allowed again. Asked before a key is
    /// looked up in the store, so a blocked client's guesses cost no query
    /// (and no call to Redis either).
    pub fn refusal_for(&self, client: Option<IpAddr>) -> Option<ApiError> {
        let client = client_key(client?);
        let until = *self.blocked.get(&client)?;
        let now = self.clock.instant();
        if until <= now {
            self.blocked.remove_if(&client, |_, until| *until <= now);
            return None;
        }
        let wait = until.duration_since(now).as_micros();
        let seconds = u64::try_from(wait.div_ceil(1_000_000)).unwrap_or(u64::MAX);
        crate::metrics::rate_limited(crate::metrics::Limiter::AuthFailures);
        Some(ratelimit::exceeded(seconds))
    }

    /// Counts a failed authentication of `client` (an IPv6 one by its /64);
    /// the 429 to answer once it has failed more than `FAILURE_LIMIT` times
    /// in the failure window.
    pub async fn note_failure(&self, client: Option<IpAddr>) -> Option<ApiError> {
        let client = client_key(client?);
        let key = format!("authfail:{client}");
        let decision = self
            .limiter
            .check(&key, FAILURE_LIMIT, self.failure_window)
            .await
            .ok()?;
        if decision.allowed {
            return None;
        }
        let seconds = decision.retry_after_secs;
        if self.blocked.len() > BLOCKED_SWEEP_ABOVE {
            let now = self.clock.instant();
            self.blocked.retain(|_, until| *until > now);
        }
        self.blocked
            .insert(client, self.clock.instant() + Duration::from_secs(seconds));
        crate::metrics::rate_limited(crate::metrics::Limiter::AuthFailures);
        Some(ratelimit::exceeded(seconds))
    }

    /// Records use of a key at `now` (the node's clock), at most once a
    /// minute per key and node (the write itself also skips keys another
    /// node touched within the minute).
    pub fn touch(&self, db: &Db, key_id: Uuid, now: Timestamp) {
        let used_at = now;
        if !self
            .last_used
            .due(key_id, self.clock.instant(), LAST_USED_EVERY)
        {
            return;
        }
        let (db, writes) = (db.clone(), self.last_used_writes.clone());
        tokio::spawn(async move {
            if let Err(error) = key_store::touch_last_used(&db, key_id, used_at).await {
                tracing::debug!(%error, %key_id, "could not record lastUsedAt");
            }
            writes.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        });
    }
}

/// Applies the invalidations other nodes publish on `bus` to `access`'s
/// cache, until shutdown. The subscription is taken before this returns,
/// so nothing published after `App::build` is missed.
pub fn spawn_invalidation_listener(
    access: &Arc<Access>,
    bus: &Bus,
    shutdown: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    let on_message = access.clone();
    let on_missed = access.clone();
    bus.listen(
        TOPIC,
        shutdown,
        move |payload| match Invalidation::decode(payload) {
            Some(what) => on_message.apply(what),
            None => tracing::warn!(%payload, "unknown auth invalidation"),
        },
        // Missed messages may have been invalidations.
        move || on_missed.apply(Invalidation::All),
    )
}
