//! Rate limits (docs/api.md, "Rate limits"): GCRA per API key, with the key's limit
//! per window as both rate and burst. Two limiters behind one interface: in
//! process (`local`) and shared by all nodes through Redis (`redis`);
//! `RateLimiter` uses Redis when configured and falls back to its local
//! limiter while Redis is unreachable. `headers` writes the response fields;
//! `client` derives the key of per-client (per-IP) limits.

pub mod client;
pub mod gcra;
pub mod lease;
pub mod local;
pub mod redis;

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use bytes::Bytes;
use uuid::Uuid;

pub use gcra::Decision;
pub use local::LocalLimiter;
pub use redis::RedisLimiter;

use crate::error::{ApiError, ErrorCode};

/// The maps every authenticated request reads (the key cache, the key's
/// limiter bucket or lease, its last-use stamp): dashmap hashed by
/// foldhash, seeded per map, rather than by the default SipHash, which a
/// callgrind profile of the request put at about as many instructions as
/// the lookups themselves.
pub type HotMap<K, V> = dashmap::DashMap<K, V, foldhash::fast::RandomState>;

/// What every limiter offers: spend one request of `key`'s allowance of
/// `limit` requests per `window`.
pub trait Limiter: Send + Sync {
    fn check(
        &self,
        key: &str,
        limit: u64,
        window: Duration,
    ) -> impl Future<Output = anyhow::Result<Decision>> + Send;

    /// The same for API key `key_id` (the bucket `key:<id>`), which every
    /// authenticated request spends: by the id, so no caller formats a name.
    fn check_api_key(
        &self,
        key_id: Uuid,
        limit: u64,
        window: Duration,
    ) -> impl Future<Output = anyhow::Result<Decision>> + Send;
}

/// After a Redis failure, how long the node decides locally before it tries
/// Redis again (so an outage costs one failed call per second, not one per
/// request).
const REDIS_RETRY_AFTER: Duration = Duration::from_secs(1);

/// The limiter a node uses: Redis when configured, else (or while Redis is
/// unreachable) its local limiter.
pub struct RateLimiter {
    local: LocalLimiter,
    redis: Option<RedisLimiter>,
    epoch: Instant,
    /// Milliseconds after `epoch` before which Redis is not tried.
    redis_skip_until_ms: AtomicU64,
    degraded: AtomicBool,
}

impl RateLimiter {
    /// The local limiter reads `clock` (the node's).
    pub fn new(redis: Option<RedisLimiter>, clock: crate::time::Clock) -> Self {
        RateLimiter {
            local: LocalLimiter::new(clock),
            redis,
            epoch: Instant::now(),
            redis_skip_until_ms: AtomicU64::new(0),
            degraded: AtomicBool::new(false),
        }
    }

    pub fn redis(&self) -> Option<&RedisLimiter> {
        self.redis.as_ref()
    }

    fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

impl RateLimiter {
    /// Asks Redis through `ask` unless it failed less than
    /// `REDIS_RETRY_AFTER` ago; `None` when the node must decide itself.
    async fn ask_redis<'a, F, Fut>(&'a self, ask: F) -> Option<Decision>
    where
        F: FnOnce(&'a RedisLimiter) -> Fut,
        Fut: Future<Output = anyhow::Result<Decision>>,
    {
        let redis = self.redis.as_ref()?;
        if self.elapsed_ms() < self.redis_skip_until_ms.load(Ordering::Relaxed) {
            return None;
        }
        match ask(redis).await {
            Ok(decision) => {
                if self.degraded.swap(false, Ordering::Relaxed) {
                    tracing::info!("Redis rate limiter reachable again");
                }
                Some(decision)
            }
            Err(error) => {
                crate::metrics::redis_error();
                let retry_ms = u64::try_from(REDIS_RETRY_AFTER.as_millis()).unwrap_or(1000);
                self.redis_skip_until_ms
                    .store(self.elapsed_ms() + retry_ms, Ordering::Relaxed);
                if !self.degraded.swap(true, Ordering::Relaxed) {
                    tracing::warn!(%error, "Redis rate limiter unreachable; using this node's local limits");
                }
                None
            }
        }
    }
}

impl Limiter for RateLimiter {
    async fn check(&self, key: &str, limit: u64, window: Duration) -> anyhow::Result<Decision> {
        if let Some(decision) = self
            .ask_redis(|redis| redis.check(key, limit, window))
            .await
        {
            return Ok(decision);
        }
        Ok(self.local.spend(key, limit, window))
    }

    async fn check_api_key(
        &self,
        key_id: Uuid,
        limit: u64,
        window: Duration,
    ) -> anyhow::Result<Decision> {
        if let Some(decision) = self
            .ask_redis(|redis| redis.check_api_key(key_id, limit, window))
            .await
        {
            return Ok(decision);
        }
        Ok(self.local.spend_api_key(key_id, limit, window))
    }
}

/// The rate-limit header values that are the same on every response of one
/// key (its limit and the policy), built once when the key is cached rather
/// than formatted per response.
#[derive(Debug, Clone)]
pub struct KeyHeaders {
    limit: HeaderValue,
    policy: Option<HeaderValue>,
}

impl KeyHeaders {
    pub fn new(limit: u64, window: Duration) -> Self {
        KeyHeaders {
            limit: HeaderValue::from(limit),
            policy: HeaderValue::try_from(format!("\"default\";q={limit};w={}", window.as_secs()))
                .ok(),
        }
    }
}

/// Writes the rate-limit fields of every authenticated response:
/// `X-RateLimit-*` and the IETF draft's `RateLimit-Policy` / `RateLimit`.
/// `key` must be the headers of the limit `decision` was made with.
pub fn apply_headers(headers: &mut HeaderMap, key: &KeyHeaders, decision: &Decision) {
    // Names made at compile time: `from_static` at run time checks every
    // byte of the name on every response.
    const LIMIT: HeaderName = HeaderName::from_static("x-ratelimit-limit");
    const REMAINING: HeaderName = HeaderName::from_static("x-ratelimit-remaining");
    const RESET: HeaderName = HeaderName::from_static("x-ratelimit-reset");
    const POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
    const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");
    // Room for all five, and for the `x-request-id` the outer middleware
    // adds on the way out, at once rather than growing (and rehashing) the
    // map on the way.
    headers.reserve(6);
    headers.insert(LIMIT, key.limit.clone());
    if let Some(policy) = &key.policy {
        headers.insert(POLICY, policy.clone());
    }
    let values = DecisionValues::new(decision);
    for (name, value) in [
        (REMAINING, values.value(values.remaining.clone())),
        (RESET, values.value(values.reset.clone())),
        (RATELIMIT, values.value(0..values.combined.len())),
    ] {
        if let Some(value) = value {
            headers.insert(name, value);
        }
    }
}

/// The three values that change per response, in one buffer: the combined
/// `RateLimit` value (`"default";r=<remaining>;t=<reset>`) holds the other
/// two as substrings, so the header values are slices of it: two
/// allocations per response (the buffer and the handle its slices share)
/// where formatting each value allocated five.
struct DecisionValues {
    combined: Bytes,
    remaining: std::ops::Range<usize>,
    reset: std::ops::Range<usize>,
}

impl DecisionValues {
    fn new(decision: &Decision) -> Self {
        // itoa rather than `write!`, which goes through the formatting
        // machinery.
        let mut digits = itoa::Buffer::new();
        let mut combined = Vec::with_capacity(64);
        combined.extend_from_slice(b"\"default\";r=");
        let remaining_at = combined.len();
        combined.extend_from_slice(digits.format(decision.remaining).as_bytes());
        let remaining = remaining_at..combined.len();
        combined.extend_from_slice(b";t=");
        let reset_at = combined.len();
        combined.extend_from_slice(digits.format(decision.reset_secs).as_bytes());
        let reset = reset_at..combined.len();
        DecisionValues {
            combined: Bytes::from(combined),
            remaining,
            reset,
        }
    }

    /// The header value of `range` of the buffer (shared, not copied).
    fn value(&self, range: std::ops::Range<usize>) -> Option<HeaderValue> {
        HeaderValue::from_maybe_shared(self.combined.slice(range)).ok()
    }
}

/// The 429 for a refused request, with `Retry-After`.
pub fn exceeded(retry_after_secs: u64) -> ApiError {
    let seconds = retry_after_secs.max(1);
    let error = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        ErrorCode::RateLimited,
        format!("Rate limit exceeded. Try again in {seconds} seconds."),
    );
    match HeaderValue::from_str(&seconds.to_string()) {
        Ok(value) => error.with_header(header::RETRY_AFTER, value),
        Err(_) => error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_show_the_key_limit_and_the_decision() {
        let key = KeyHeaders::new(1000, Duration::from_secs(3600));
        let decision = Decision::from_micros(true, 1000, 998, 8_000_000, 0);
        let mut headers = HeaderMap::new();
        apply_headers(&mut headers, &key, &decision);
        let value = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        assert_eq!(value("x-ratelimit-limit"), Some("1000"));
        assert_eq!(value("x-ratelimit-remaining"), Some("998"));
        assert_eq!(value("x-ratelimit-reset"), Some("8"));
        assert_eq!(value("ratelimit-policy"), Some("\"default\";q=1000;w=3600"));
        assert_eq!(value("ratelimit"), Some("\"default\";r=998;t=8"));
    }
}
