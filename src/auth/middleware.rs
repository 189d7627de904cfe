//! Authentication of every `/api/v1` request, in the documented order (docs/api.md, "Authentication"):
//! 401 (missing, invalid, expired, inactive key; 429 instead for a client
//! over the failed-authentication limit, decided before the key is looked
//! up) → 403 (suspended company) → 429 (rate limit) → routing (404/405) →
//! scope (403, at the route).
//! Every response after the rate-limit check carries the rate-limit headers.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use dashmap::DashMap;
use uuid::Uuid;

use super::cache::{KeyCache, Slot};
use super::ready::{ReadyKey, allowance};
use super::{Principal, key};
use crate::config::Config;
use crate::db::Db;
use crate::error::ApiError;
use crate::keys::store as key_store;
use crate::ratelimit::client::{client_key, client_of};
use crate::ratelimit::{self, Decision, HotMap, Limiter, RateLimiter, RedisLimiter};
use crate::state::AppState;
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
    last_used: HotMap<Uuid, Instant>,
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
        let redis = redis.map(|conn| RedisLimiter::new(conn, &config.redis_prefix, clock.clone()));
        Access {
            keys: KeyCache::new(),
            limiter: RateLimiter::new(redis, clock.clone()),
            window: config.rate_window,
            failure_window: config.auth_failure_window,
            blocked: DashMap::new(),
            last_used: HotMap::default(),
            last_used_writes: Arc::default(),
            clock: clock.clone(),
        }
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
        let now = self.clock.instant();
        let mut due = false;
        self.last_used
            .entry(key_id)
            .and_modify(|at| {
                if now.duration_since(*at) >= LAST_USED_EVERY {
                    *at = now;
                    due = true;
                }
            })
            .or_insert_with(|| {
                due = true;
                now
            });
        if !due {
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

pub const API_KEY_HEADER: &str = "x-api-key";

fn unauthorized(code: &'static str, message: &str) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, code, message)
}

/// The authentication of every request on `/api/v1` (the API's middleware
/// runs it).
pub async fn authenticate(state: &AppState, mut request: Request, next: Next) -> Response {
    // The socket endpoint also accepts a token in the query (browsers cannot
    // set headers on a WebSocket); it authenticates that token itself.
    if request.uri().path().ends_with("/ws") && !request.headers().contains_key(API_KEY_HEADER) {
        return next.run(request).await;
    }
    let client = client_of(request.extensions());
    let header = request.headers().get(API_KEY_HEADER);
    let now = state.clock.now();
    let outcome = ready_key_for(state, header, client)
        .await
        .and_then(|key| key.principal(now).map(|principal| (key, principal)));
    let (key, principal) = match outcome {
        Ok(found) => found,
        Err(error) => {
            if error.status == StatusCode::UNAUTHORIZED
                && let Some(refusal) = Box::pin(state.access.note_failure(client)).await
            {
                return refusal.into_response();
            }
            return error.into_response();
        }
    };
    state.access.touch(&state.db, principal.key_id, now);
    let decision = state.access.check_rate(&principal).await;
    let mut response = if decision.allowed {
        request.extensions_mut().insert(principal);
        next.run(request).await
    } else {
        crate::metrics::rate_limited(crate::metrics::Limiter::ApiKey);
        ratelimit::exceeded(decision.retry_after_secs).into_response()
    };
    ratelimit::apply_headers(response.headers_mut(), key.headers(), &decision);
    response
}

/// Resolves the presented key to a principal, or the 401/403 to answer.
///
/// For a `client` over the failed-authentication limit it is 429 before the
/// key is looked up (so guesses cost no query), unless this node has served
/// the key before: a valid key keeps working from a throttled address. The
/// caller counts a 401 as a failure of the client (`Access::note_failure`).
pub async fn principal_for(
    state: &AppState,
    header: Option<&axum::http::HeaderValue>,
    client: Option<IpAddr>,
) -> Result<Principal, ApiError> {
    ready_key_for(state, header, client)
        .await?
        .principal(state.clock.now())
}

/// The cached (or now cached) key behind `header`, whatever its state; the
/// 401/429 of `principal_for` when there is none.
async fn ready_key_for(
    state: &AppState,
    header: Option<&axum::http::HeaderValue>,
    client: Option<IpAddr>,
) -> Result<Arc<ReadyKey>, ApiError> {
    let Some(header) = header else {
        return Err(unauthorized(
            "missing_api_key",
            "X-API-Key header is required",
        ));
    };
    let presented = header.to_str().unwrap_or("").trim();
    if presented.is_empty() {
        return Err(unauthorized(
            "missing_api_key",
            "X-API-Key header is required",
        ));
    }
    let digest = key::digest(presented);
    let slot = Slot::Digest(digest);
    let cache = &state.access.keys;
    // A cached key passed the format and checksum test before it was
    // cached; a key the cache does not hold takes it before anything else,
    // so a malformed key or a bad checksum never reaches the database.
    if let Some(key) = cache.get(&slot) {
        return Ok(key);
    }
    if key::parse(presented).is_none() {
        return Err(unauthorized("invalid_api_key", "Invalid API key"));
    }
    if !cache.served_before(&slot)
        && let Some(refusal) = state.access.refusal_for(client)
    {
        return Err(refusal);
    }
    if cache.is_unknown(&digest) {
        return Err(unauthorized("invalid_api_key", "Invalid API key"));
    }
    let generation = cache.generation();
    cache.note_store_lookup();
    // The store keeps the digest as hex: made only on a miss. Boxed, like
    // every rare path of this middleware: the query's future would
    // otherwise size the future of every request, which axum copies into a
    // box per request.
    let hex_digest = hex::encode(digest);
    let lookup = key_store::find_for_auth(&state.db, &hex_digest);
    let Some(record) = Box::pin(lookup).await.map_err(ApiError::from)? else {
        cache.remember_unknown(digest, generation);
        return Err(unauthorized("invalid_api_key", "Invalid API key"));
    };
    let key = Arc::new(ReadyKey::new(&record, state.access.window));
    cache.insert(slot, Arc::clone(&key), generation);
    Ok(key)
}
