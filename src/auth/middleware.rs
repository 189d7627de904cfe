//! Authentication of every `/api/v1` request, in the documented order (docs/api.md, "Authentication"):
//! 401 (missing, invalid, expired, inactive key; 429 instead for a client
//! over the failed-authentication limit, decided before the key is looked
//! up) → 403 (suspended company) → 429 (rate limit) → routing (404/405) →
//! scope (403, at the route).
//! Every response after the rate-limit check carries the rate-limit headers.

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::access::Access;
use super::cache::Slot;
use super::ready::ReadyKey;
use super::{Principal, key, session};
use crate::db::Db;
use crate::error::{ApiError, ErrorCode};
use crate::keys::store as key_store;
use crate::ratelimit::{self, client::client_of};

pub const API_KEY_HEADER: &str = "x-api-key";

/// The challenge every 401 of `/api/v1` carries (RFC 9110 asks a 401 for
/// one): the key goes in the `X-API-Key` header.
pub const CHALLENGE: &str = r#"ApiKey realm="supportdesk", header="X-API-Key""#;

/// `error` as a response, with the challenge when it is a 401.
pub fn challenged(error: ApiError) -> Response {
    let unauthorized = error.status == StatusCode::UNAUTHORIZED;
    let mut response = error.into_response();
    if unauthorized {
        response.headers_mut().insert(
            axum::http::header::WWW_AUTHENTICATE,
            axum::http::HeaderValue::from_static(CHALLENGE),
        );
    }
    response
}

/// The authentication of every request on `/api/v1` (the API's middleware
/// runs it): keys are looked up in `db` on a miss of `access`'s cache. The
/// socket endpoint `/api/v1/ws`, which also takes a token in its query, is
/// mounted outside the API and authenticates itself; every other path,
/// one that ends in `/ws` included, needs a key here.
pub async fn authenticate(access: &Access, db: &Db, request: Request, next: Next) -> Response {
    let client = client_of(request.extensions());
    let header = request.headers().get(API_KEY_HEADER);
    // An agent's browser sends the session cookie; a key, when both come,
    // is what the caller chose to present.
    if header.is_none()
        && let Some(secret) = session::cookie_secret(request.headers())
    {
        let secret = secret.to_owned();
        return Box::pin(authenticate_session(
            access, db, secret, client, request, next,
        ))
        .await;
    }
    let now = access.clock().now();
    let outcome = ready_key_for(access, db, header, client)
        .await
        .and_then(|key| key.principal(now).map(|principal| (key, principal)));
    let (key, principal) = match outcome {
        Ok(found) => found,
        Err(error) => {
            if error.status == StatusCode::UNAUTHORIZED
                && let Some(refusal) = Box::pin(access.note_failure(client)).await
            {
                return refusal.into_response();
            }
            return challenged(error);
        }
    };
    access.touch(db, principal.key_id, now);
    admit(access, principal, key.headers(), request, next).await
}

/// Spends one request of `principal`'s allowance and runs the route with
/// the principal if one is left (429 otherwise); the answer carries the
/// rate-limit headers (`limits`: the caller's) either way.
async fn admit(
    access: &Access,
    principal: Principal,
    limits: &crate::ratelimit::KeyHeaders,
    mut request: Request,
    next: Next,
) -> Response {
    let decision = access.check_rate(&principal).await;
    let mut response = if decision.allowed {
        request.extensions_mut().insert(principal);
        next.run(request).await
    } else {
        crate::metrics::rate_limited(crate::metrics::Limiter::ApiKey);
        ratelimit::exceeded(decision.retry_after_secs).into_response()
    };
    ratelimit::apply_headers(response.headers_mut(), limits, &decision);
    response
}

/// `authenticate` for a request signed in by the session cookie whose
/// secret is `secret`: 401 (no such session, ended, expired, idle) → 403
/// (suspended company; a change without the CSRF token) → 429 → the route.
async fn authenticate_session(
    access: &Access,
    db: &Db,
    secret: String,
    client: Option<IpAddr>,
    request: Request,
    next: Next,
) -> Response {
    let now = access.clock().now();
    let ready = match session::ready_session(&access.sessions, db, &secret).await {
        Ok(ready) => ready,
        Err(error) => {
            if let Some(refusal) = Box::pin(access.note_failure(client)).await {
                return refusal.into_response();
            }
            return error.into_response();
        }
    };
    let principal = match ready.principal(now, access.session_idle) {
        Ok(principal) => principal,
        Err(error) => return error.into_response(),
    };
    if session::changes_state(request.method()) && !ready.csrf_matches(request.headers()) {
        return session::csrf_failed().into_response();
    }
    access
        .sessions
        .touch(db, access.clock(), ready.session_id(), now);
    admit(access, principal, &access.agent_headers, request, next).await
}

/// Resolves the presented key to a principal, or the 401/403 to answer.
///
/// For a `client` over the failed-authentication limit it is 429 before the
/// key is looked up (so guesses cost no query), unless this node has served
/// the key before: a valid key keeps working from a throttled address. The
/// caller counts a 401 as a failure of the client (`Access::note_failure`).
pub async fn principal_for(
    access: &Access,
    db: &Db,
    header: Option<&axum::http::HeaderValue>,
    client: Option<IpAddr>,
) -> Result<Principal, ApiError> {
    ready_key_for(access, db, header, client)
        .await?
        .principal(access.clock().now())
}

/// The cached (or now cached) key behind `header`, whatever its state; the
/// 401/429 of `principal_for` when there is none.
async fn ready_key_for(
    access: &Access,
    db: &Db,
    header: Option<&axum::http::HeaderValue>,
    client: Option<IpAddr>,
) -> Result<Arc<ReadyKey>, ApiError> {
    let Some(header) = header else {
        return Err(ApiError::unauthorized(
            ErrorCode::MissingApiKey,
            "X-API-Key header is required",
        ));
    };
    let presented = header.to_str().unwrap_or("").trim();
    if presented.is_empty() {
        return Err(ApiError::unauthorized(
            ErrorCode::MissingApiKey,
            "X-API-Key header is required",
        ));
    }
    let digest = key::digest(presented);
    let slot = Slot::Digest(digest);
    let cache = &access.keys;
    // A cached key passed the format and checksum test before it was
    // cached; a key the cache does not hold takes it before anything else,
    // so a malformed key or a bad checksum never reaches the database.
    if let Some(key) = cache.get(&slot) {
        return Ok(key);
    }
    if key::parse(presented).is_none() {
        return Err(ApiError::unauthorized(
            ErrorCode::InvalidApiKey,
            "Invalid API key",
        ));
    }
    if !cache.served_before(&slot)
        && let Some(refusal) = access.refusal_for(client)
    {
        return Err(refusal);
    }
    if cache.is_unknown(&digest) {
        return Err(ApiError::unauthorized(
            ErrorCode::InvalidApiKey,
            "Invalid API key",
        ));
    }
    let generation = cache.generation();
    cache.note_store_lookup();
    // The store keeps the digest as hex: made only on a miss. Boxed, like
    // every rare path of this middleware: the query's future would
    // otherwise size the future of every request, which axum copies into a
    // box per request.
    let hex_digest = hex::encode(digest);
    let lookup = key_store::find_for_auth(db, &hex_digest);
    let Some(record) = Box::pin(lookup).await.map_err(ApiError::from)? else {
        cache.remember_unknown(digest, generation);
        return Err(ApiError::unauthorized(
            ErrorCode::InvalidApiKey,
            "Invalid API key",
        ));
    };
    let key = Arc::new(ReadyKey::new(&record, access.window, access.clock().now()));
    cache.insert(slot, Arc::clone(&key), generation);
    Ok(key)
}
