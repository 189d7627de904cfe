//! `Idempotency-Key` on POST requests: a request sent again with the same
//! key (by a client that lost the answer) gets the first answer back
//! instead of running again.
//!
//! - The layer claims the key (a `running` row with a random claim token and
//!   a lease) before the handler runs; a repeat finds the row and is
//!   answered from it: the stored answer, 409 while the first still runs,
//!   422 when the key names another request.
//! - While the handler runs, a commit hook marks the row `applied` inside
//!   every transaction the request commits, only while the claim still
//!   holds it; so the change and its record commit together, and a change
//!   is never made twice even if the node dies before storing the answer
//!   (such a row is answered 409 `idempotency_response_lost`). The hook
//!   reaches the transactions explicitly: the layer hands the handler a
//!   [`RequestState`] whose `db` carries it, and the stores begin their
//!   transactions from that handle.
//! - Once claimed, the request runs to its end in its own task, so a client
//!   that hangs up (the reason it will retry) still leaves a stored answer.
//!
//! The tenant (company and mode) scopes keys: on `/api/v1` the key's, on the
//! widget the widget key's (`widget` resolves it and calls [`run`]). Within
//! it a stored answer belongs to the [`Caller`] that sent the request: a
//! repeat from another caller is refused (422), never answered from it, as
//! the answer may carry what only its sender may see (a new key's secret,
//! a visitor token), and the handler's own checks did not run for the
//! repeat. Refusing rather than running it as a new request means a client
//! that retries under other credentials never makes its change twice.

mod caller;
mod spool;
pub(crate) mod store;

pub use caller::Caller;

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Extension;
use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::FutureExt;
use futures::future::BoxFuture;
use tracing::Instrument;
use uuid::Uuid;

use crate::auth::{Principal, Tenant};
use crate::db::{CommitHook, Query, Tx};
use crate::error::{ApiError, ApiResult, ErrorCode, StoreError};
use crate::state::AppState;
use store::{Claim, KeyRecord, KeyState, RequestIdentity, StoredAnswer, Terms};

/// The request header carrying the key.
pub const KEY_HEADER: &str = "idempotency-key";
/// Set to `true` on an answer replayed from a stored one.
pub const REPLAYED_HEADER: &str = "idempotent-replayed";
/// The header's name as the API spells it (in errors and documents).
pub const KEY_HEADER_NAME: &str = "Idempotency-Key";
pub const KEY_MAX_LEN: usize = 255;

/// How long a claim protects a running request from being taken over. A
/// request still running after it loses its claim: its commit fails.
const LEASE: Duration = Duration::from_secs(60);
/// Answers longer than this cannot be stored (POST answers are records).
const ANSWER_LIMIT: usize = 4 * 1024 * 1024;
/// Claims attempted when the row changes between reading and taking it.
const CLAIM_ATTEMPTS: usize = 3;

/// How large a body a keyed route takes: the layer reads it whole before
/// the handler runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyLimit {
    /// The service's request body limit (1 MiB).
    Service,
    /// An upload with an API key: the attachment limit, and the framing a
    /// `multipart/form-data` body adds to its file.
    Upload,
}

impl BodyLimit {
    fn bytes(self, state: &AppState) -> u64 {
        match self {
            BodyLimit::Service => crate::router::paths::BODY_LIMIT as u64,
            BodyLimit::Upload => state
                .attachments
                .max_bytes
                .saturating_add(crate::attachments::form::FORM_ALLOWANCE),
        }
    }
}

/// The layer on every POST under `/api/v1`, inside authentication and the
/// scope check, so 401, 403 and 429 come first and are never recorded.
/// `limit` is the route's.
pub async fn guard(
    limit: BodyLimit,
    Extension(state): Extension<AppState>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST || !request.headers().contains_key(KEY_HEADER) {
        return next.run(request).await;
    }
    let Some((tenant, caller)) = request
        .extensions()
        .get::<Principal>()
        .map(|principal| (principal.tenant, Caller::ApiKey(principal.key_id)))
    else {
        // Mounted outside authentication: there is no tenant to scope the key.
        return next.run(request).await;
    };
    respond(run_keyed(state, tenant, caller, limit, request, next).await)
}

/// The request's key: None without the header, 400 when it is not 1–255
/// printable ASCII characters (or is sent twice).
pub fn key_of(headers: &HeaderMap) -> ApiResult<Option<String>> {
    let mut values = headers.get_all(KEY_HEADER).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    let invalid = |message: &str| ApiError::invalid_field(KEY_HEADER_NAME, message);
    if values.next().is_some() {
        return Err(invalid("must be sent once"));
    }
    let bytes = value.as_bytes();
    if bytes.is_empty() || bytes.len() > KEY_MAX_LEN {
        return Err(invalid("must be 1 to 255 characters"));
    }
    if !bytes.iter().all(|b| (0x20..=0x7e).contains(b)) {
        return Err(invalid("must be printable ASCII characters"));
    }
    Ok(Some(String::from_utf8_lossy(bytes).into_owned()))
}

/// Runs `request` of `caller` under its `Idempotency-Key` (if it has one)
/// in `tenant`, its body within the service's limit.
pub async fn run(
    state: AppState,
    tenant: Tenant,
    caller: Caller,
    request: Request,
    next: Next,
) -> Response {
    respond(run_keyed(state, tenant, caller, BodyLimit::Service, request, next).await)
}

fn respond(outcome: ApiResult<Response>) -> Response {
    match outcome {
        Ok(response) => response,
        Err(error) => error.into_response(),
    }
}

async fn run_keyed(
    state: AppState,
    tenant: Tenant,
    caller: Caller,
    limit: BodyLimit,
    request: Request,
    next: Next,
) -> ApiResult<Response> {
    let Some(key) = key_of(request.headers())? else {
        return Ok(next.run(request).await);
    };
    let (parts, body) = request.into_parts();
    let spooled = spool::spool(
        body,
        limit.bytes(&state),
        crate::router::paths::BODY_LIMIT,
        &state.config.data_dir,
    )
    .await
    .map_err(|err| spool_error(err, limit))?;
    let identity = RequestIdentity {
        method: parts.method.as_str().to_string(),
        path: recorded_path(&parts.uri).to_string(),
        fingerprint: spooled.fingerprint,
    };
    let claim = Claim {
        tenant,
        principal: caller.recorded(),
        key,
        token: Uuid::new_v4(),
    };
    if let Some(answer) = acquire(&state, &claim, &identity).await? {
        return Ok(answer);
    }
    let hook = Arc::new(ClaimHook {
        claim: claim.clone(),
        applied: AtomicBool::new(false),
    });
    let mut request = Request::from_parts(parts, spooled.body);
    let keyed = state.modified(|shared| shared.db = shared.db.with_commit_hook(hook.clone()));
    request.extensions_mut().insert(RequestState(keyed));
    let finished = tokio::spawn(
        run_claimed(state, claim, hook, next.run(request)).instrument(tracing::Span::current()),
    );
    Ok(finished
        .await
        .unwrap_or_else(|_| ApiError::internal().into_response()))
}

/// The answer to a keyed body that could not be read whole: 413 past the
/// route's limit (the service's own message for the service's limit).
fn spool_error(err: spool::SpoolError, limit: BodyLimit) -> ApiError {
    match err {
        spool::SpoolError::TooLarge(_) if limit == BodyLimit::Service => {
            ApiError::from_status(StatusCode::PAYLOAD_TOO_LARGE)
        }
        spool::SpoolError::TooLarge(bytes) => ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::PayloadTooLarge,
            format!("Request body exceeds {bytes} bytes"),
        ),
        spool::SpoolError::Client(_) => ApiError::new(
            StatusCode::BAD_REQUEST,
            ErrorCode::BadRequest,
            "The request body could not be read",
        ),
        spool::SpoolError::Io(error) => {
            tracing::error!(%error, "could not spool a request body for its Idempotency-Key");
            ApiError::internal()
        }
    }
}

/// Claims the key for this request: None when it is ours to run, else the
/// answer a repeat gets.
async fn acquire(
    state: &AppState,
    claim: &Claim,
    identity: &RequestIdentity,
) -> ApiResult<Option<Response>> {
    let db = &state.db;
    for _ in 0..CLAIM_ATTEMPTS {
        let terms = Terms {
            lease: LEASE,
            ttl: state.config.idempotency_ttl,
        };
        let record = match store::claim(db, claim, identity, terms).await? {
            Ok(()) => return Ok(None),
            // Deleted between our insert and our read: claim again.
            Err(None) => continue,
            Err(Some(record)) => record,
        };
        if record.expired {
            if store::take_over(db, claim, &record, identity, terms).await? {
                return Ok(None);
            }
            continue;
        }
        if !record.sent_by(claim) {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                ErrorCode::IdempotencyKeyReused,
                "This Idempotency-Key was used by another sender (API key or visitor); \
                 use a key of your own",
            ));
        }
        if !record.names(identity) {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                ErrorCode::IdempotencyKeyReused,
                "This Idempotency-Key was used for another request (method, path or body)",
            ));
        }
        match record.state {
            KeyState::Completed => return replay(record).map(Some),
            KeyState::Running | KeyState::Applied if !record.lease_passed => {
                return Err(in_progress());
            }
            // Its request stopped before changing anything: run it now.
            KeyState::Running => {
                if store::take_over(db, claim, &record, identity, terms).await? {
                    return Ok(None);
                }
            }
            KeyState::Applied => return Err(response_lost()),
        }
    }
    Err(in_progress())
}

fn in_progress() -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        ErrorCode::IdempotencyInProgress,
        "A request with this Idempotency-Key is still running; retry shortly",
    )
    .with_header(header::RETRY_AFTER, HeaderValue::from_static("1"))
}

fn response_lost() -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        ErrorCode::IdempotencyResponseLost,
        "The request with this Idempotency-Key was carried out but its answer was lost; \
         look the change up instead of retrying",
    )
}

/// The stored answer, byte for byte, marked as replayed.
fn replay(record: KeyRecord) -> ApiResult<Response> {
    let status = record
        .response_status
        .and_then(|status| u16::try_from(status).ok())
        .and_then(|status| StatusCode::from_u16(status).ok())
        .ok_or_else(|| {
            tracing::error!("a completed idempotency record has no valid status");
            ApiError::internal()
        })?;
    let mut response = Response::new(Body::from(record.response_body.unwrap_or_default()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    if let Some(content_type) = record
        .response_content_type
        .and_then(|value| HeaderValue::try_from(value).ok())
    {
        headers.insert(header::CONTENT_TYPE, content_type);
    }
    headers.insert(REPLAYED_HEADER, HeaderValue::from_static("true"));
    Ok(response)
}

/// Whether an answer the handler gave is kept for repeats: successes and
/// the client's own mistakes, not refusals the client can cure by waiting
/// or by fixing its key (401, 403, 429) nor server failures.
fn is_kept(status: StatusCode) -> bool {
    status.is_success()
        || (status.is_client_error()
            && !matches!(
                status,
                StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN | StatusCode::TOO_MANY_REQUESTS
            ))
}

/// Runs the handler holding `claim`, then stores its answer or frees the key.
async fn run_claimed(
    state: AppState,
    claim: Claim,
    hook: Arc<ClaimHook>,
    handler: impl Future<Output = Response> + Send,
) -> Response {
    let outcome = AssertUnwindSafe(handler).catch_unwind().await;
    let applied = hook.applied.load(Ordering::Acquire);
    let db = &state.db;
    let response = match outcome {
        Ok(response) => response,
        Err(_) => {
            tracing::error!("handler panicked");
            // A change that committed keeps its row (`applied`): a repeat
            // learns that the answer was lost.
            if !applied {
                release(db, &claim).await;
            }
            return ApiError::internal().into_response();
        }
    };
    // A change that committed is recorded whatever the answer, so it is
    // never made twice.
    if !is_kept(response.status()) && !applied {
        release(db, &claim).await;
        return response;
    }
    let (parts, body) = response.into_parts();
    let body: Bytes = match axum::body::to_bytes(body, ANSWER_LIMIT).await {
        Ok(body) => body,
        Err(error) => {
            tracing::error!(%error, "could not read an answer to store for its Idempotency-Key");
            if !applied {
                release(db, &claim).await;
            }
            return ApiError::internal().into_response();
        }
    };
    let answer = StoredAnswer {
        status: parts.status.as_u16(),
        content_type: parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .map(str::to_string),
        body: body.to_vec(),
    };
    if let Err(error) = store::complete(db, &claim, answer).await {
        // The answer still goes out; a repeat finds the row running or
        // applied and is told so once the lease has passed.
        tracing::warn!(%error, "could not store the answer of an Idempotency-Key");
    }
    Response::from_parts(parts, Body::from(body))
}

async fn release(db: &crate::db::Db, claim: &Claim) {
    if let Err(error) = store::release(db, claim).await {
        tracing::warn!(%error, "could not free an Idempotency-Key");
    }
}

/// The state a handler that writes works with: the service's, or for a
/// request under an `Idempotency-Key` a copy whose `db` carries the key's
/// commit hook (the layer hands it over as a request extension), so every
/// transaction the handler begins from it commits the key's mark with its
/// change. A POST handler takes this instead of `State`.
#[derive(Clone)]
pub struct RequestState(pub AppState);

impl axum::extract::FromRequestParts<AppState> for RequestState {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        Ok(match parts.extensions.get::<RequestState>() {
            Some(keyed) => keyed.clone(),
            None => RequestState(state.clone()),
        })
    }
}

/// Marks the claim's row applied in every transaction of the request's
/// handle that commits.
struct ClaimHook {
    claim: Claim,
    /// A transaction of this request has committed (with the mark).
    applied: AtomicBool,
}

impl CommitHook for ClaimHook {
    fn before_commit<'a>(&'a self, tx: &'a mut Tx) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            // Once applied the row cannot be taken over (only running rows
            // can), so later transactions need not mark it again.
            if self.applied.load(Ordering::Acquire) || store::mark_applied(tx, &self.claim).await? {
                Ok(())
            } else {
                // Another request took the key over after our lease passed:
                // it runs the change, ours must not.
                Err(self.refused())
            }
        })
    }

    fn committed(&self) {
        self.applied.store(true, Ordering::Release);
    }

    fn push_cte(&self, query: Query, name: &str) -> (Query, bool) {
        if self.applied.load(Ordering::Acquire) {
            return (query, false);
        }
        (store::push_mark_applied(query, &self.claim, name), true)
    }

    fn refused(&self) -> StoreError {
        StoreError::Conflict(KEY_HEADER_NAME.to_string())
    }
}

/// The path and query a key is recorded with: an API path relative to the
/// API's mount point, the form keys were always stored in, so a key
/// recorded by an older node still matches its retry.
fn recorded_path(uri: &axum::http::Uri) -> &str {
    let path = uri
        .path_and_query()
        .map_or_else(|| uri.path(), |p| p.as_str());
    path.strip_prefix(crate::router::paths::API_PREFIX)
        .filter(|rest| rest.starts_with('/'))
        .unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::recorded_path;

    #[test]
    fn an_api_path_is_recorded_relative_to_the_api_and_others_whole() {
        let path = |uri: &str| recorded_path(&uri.parse().expect("uri")).to_string();
        assert_eq!(path("/api/v1/tickets?x=1"), "/tickets?x=1");
        assert_eq!(path("/widget/v1/sessions"), "/widget/v1/sessions");
        assert_eq!(path("/api/v10/tickets"), "/api/v10/tickets");
    }
}
