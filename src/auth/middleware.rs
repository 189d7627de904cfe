//! Authentication of every `/api/v1` request, in DESIGN.md's order:
//! 401 (missing, invalid, expired, inactive key) → 403 (suspended company)
//! → 429 (rate limit) → routing (404/405) → scope (403, at the route).

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{Mode, Principal, ScopeSet, Tenant, key};
use crate::app::AppState;
use crate::config::Config;
use crate::error::ApiError;
use crate::keys::store::{self as key_store, KeyForAuth};
use crate::time::Timestamp;

/// Shared authentication state: later the key cache and rate limiters.
pub struct Access {}

impl Access {
    pub fn new(_config: &Config, _redis: Option<redis::aio::ConnectionManager>) -> Self {
        Access {}
    }
}

pub const API_KEY_HEADER: &str = "x-api-key";

fn unauthorized(code: &'static str, message: &str) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, code, message)
}

/// The middleware on `/api/v1`.
pub async fn authenticate(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    // The socket endpoint also accepts a token in the query (browsers cannot
    // set headers on a WebSocket); it authenticates that token itself.
    if request.uri().path().ends_with("/ws") && !request.headers().contains_key(API_KEY_HEADER) {
        return next.run(request).await;
    }
    let principal = match principal_for(&state, request.headers().get(API_KEY_HEADER)).await {
        Ok(principal) => principal,
        Err(error) => return error.into_response(),
    };
    request.extensions_mut().insert(principal);
    next.run(request).await
}

/// Resolves the presented key to a principal, or the 401/403 to answer.
pub async fn principal_for(
    state: &AppState,
    header: Option<&axum::http::HeaderValue>,
) -> Result<Principal, ApiError> {
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
    // A malformed key or a bad checksum never reaches the database.
    if key::parse(presented).is_none() {
        return Err(unauthorized("invalid_api_key", "Invalid API key"));
    }
    let record = key_store::find_for_auth(&state.db, &key::hash(presented))
        .await
        .map_err(ApiError::from)?
        .ok_or_else(|| unauthorized("invalid_api_key", "Invalid API key"))?;
    check_record(&record)
}

/// The outcome table of SPEC.md for a key that exists.
pub fn check_record(record: &KeyForAuth) -> Result<Principal, ApiError> {
    if record
        .expires_at
        .is_some_and(|expiry| expiry <= Timestamp::now())
    {
        return Err(unauthorized("expired_api_key", "API key has expired"));
    }
    if !record.is_active {
        return Err(unauthorized("invalid_api_key", "API key is inactive"));
    }
    if record.company_status != "active" {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "account_suspended",
            "Account is suspended",
        ));
    }
    Ok(Principal {
        key_id: record.id,
        tenant: Tenant {
            company_id: record.company_id,
            mode: Mode::parse(&record.mode).unwrap_or(Mode::Test),
        },
        scopes: ScopeSet::parse_list(&record.scopes).unwrap_or_default(),
        rate_limit: record.rate_limit,
    })
}
