//! Rate limits (docs/api.md, "Rate limits"): GCRA per API key, with the key's limit
//! per window as both rate and burst. Two limiters behind one interface: in
//! process (`local`) and shared by all nodes through Redis (`redis`);
//! `RateLimiter` uses Redis when configured and falls back to its local
//! limiter while Redis is unreachable. `headers` writes the response fields;
//! `client` derives the key of per-client (per-IP) limits.

pub mod client;
pub mod gcra;
pub mod local;
pub mod redis;

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};

pub use gcra::Decision;
pub use local::LocalLimiter;
pub use redis::RedisLimiter;

use crate::error::ApiError;

/// What every limiter offers: spend one request of `key`'s allowance of
/// `limit` requests per `window`.
pub trait Limiter: Send + Sync {
    fn check(
        &self,
        key: &str,
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
    pub fn new(redis: Option<RedisLimiter>) -> Self {
        RateLimiter {
            local: LocalLimiter::new(),
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

impl Limiter for RateLimiter {
    async fn check(&self, key: &str, limit: u64, window: Duration) -> anyhow::Result<Decision> {
        if let Some(redis) = &self.redis
            && self.elapsed_ms() >= self.redis_skip_until_ms.load(Ordering::Relaxed)
        {
            match redis.check(key, limit, window).await {
                Ok(decision) => {
                    if self.degraded.swap(false, Ordering::Relaxed) {
                        tracing::info!("Redis rate limiter reachable again");
                    }
                    return Ok(decision);
                }
                Err(error) => {
                    crate::metrics::redis_error();
                    let retry_ms = u64::try_from(REDIS_RETRY_AFTER.as_millis()).unwrap_or(1000);
                    self.redis_skip_until_ms
                        .store(self.elapsed_ms() + retry_ms, Ordering::Relaxed);
                    if !self.degraded.swap(true, Ordering::Relaxed) {
                        tracing::warn!(%error, "Redis rate limiter unreachable; using this node's local limits");
                    }
                }
            }
        }
        Ok(self.local.spend(key, limit, window))
    }
}

/// Writes the rate-limit fields of every authenticated response:
/// `X-RateLimit-*` and the IETF draft's `RateLimit-Policy` / `RateLimit`.
pub fn apply_headers(headers: &mut HeaderMap, decision: &Decision, window: Duration) {
    let mut set = |name: &'static str, value: String| {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(HeaderName::from_static(name), value);
        }
    };
    set("x-ratelimit-limit", decision.limit.to_string());
    set("x-ratelimit-remaining", decision.remaining.to_string());
    set("x-ratelimit-reset", decision.reset_secs.to_string());
    set(
        "ratelimit-policy",
        format!("\"default\";q={};w={}", decision.limit, window.as_secs()),
    );
    set(
        "ratelimit",
        format!(
            "\"default\";r={};t={}",
            decision.remaining, decision.reset_secs
        ),
    );
}

/// The 429 for a refused request, with `Retry-After`.
pub fn exceeded(retry_after_secs: u64) -> ApiError {
    let seconds = retry_after_secs.max(1);
    let error = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limited",
        format!("Rate limit exceeded. Try again in {seconds} seconds."),
    );
    match HeaderValue::from_str(&seconds.to_string()) {
        Ok(value) => error.with_header(header::RETRY_AFTER, value),
        Err(_) => error,
    }
}
