//! `/api-keys`: list (never secrets), create (the value is returned once),
//! get, update, revoke. A key manages only keys of its own company and mode,
//! and never grants or touches scopes it does not hold itself, nor a later
//! expiry or a higher rate limit than its own.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::routes;
use uuid::Uuid;

use super::store::{self, ApiKey, KeyChanges, NewKey};
use crate::auth::access::Access;
use crate::auth::cache::{self, Invalidation};
use crate::auth::{Mode, Principal, Scope, ScopeSet};
use crate::db::Db;
use crate::error::{ApiError, ApiResult, ErrorCode, FieldError};
use crate::extract::{Id, Json, Query, Requested};
use crate::idempotency::RequestState;
use crate::openapi::schema;
use crate::realtime::{Realtime, credentials};
use crate::router::ApiRouter;
use crate::time::{Clock, Timestamp};
use crate::validate::{Fields, NAME_MAX, Page, PageQuery, Paged, ensure, problem, required_text};

/// The highest `rateLimit` a key may have (requests per window).
pub const MAX_RATE_LIMIT: i64 = 1_000_000;
/// The furthest `expiresIn` / `expiresAt` may reach.
const MAX_EXPIRY_SECS: u64 = 100 * 365 * 86_400;

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::ApiKeysRead, routes!(list))
        .route(Scope::ApiKeysWrite, routes!(create))
        .route(Scope::ApiKeysRead, routes!(get_one))
        .route(Scope::ApiKeysWrite, routes!(update))
        .route(Scope::ApiKeysWrite, routes!(revoke))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateKey {
    #[schema(schema_with = schema::name, required)]
    name: Option<String>,
    /// The key's mode: must be the mode of the key making the request.
    #[serde(rename = "type")]
    #[schema(value_type = Option<Mode>)]
    mode: Option<String>,
    /// At least one; only scopes the requesting key holds itself.
    #[schema(schema_with = scope_list, required)]
    scopes: Option<Vec<String>>,
    /// Requests per hour (default 1000, or the calling key's own if lower);
    /// never above the calling key's own.
    #[schema(minimum = 1, maximum = 1_000_000)]
    rate_limit: Option<i64>,
    /// A future RFC 3339 time; not together with `expiresIn`.
    #[schema(value_type = Option<String>, format = DateTime)]
    expires_at: Option<String>,
    /// Seconds (a number) or a duration such as `"30d"`, `"12h"`.
    #[schema(schema_with = expires_in)]
    expires_in: Option<serde_json::Value>,
}

pub(crate) fn scope_list() -> utoipa::openapi::schema::ArrayBuilder {
    utoipa::openapi::schema::ArrayBuilder::new()
        .items(schema::scope_name())
        .min_items(Some(1))
}

pub(crate) fn expires_in() -> utoipa::openapi::schema::OneOfBuilder {
    use utoipa::openapi::{ObjectBuilder, Type};
    utoipa::openapi::schema::OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(1)),
        )
        .item(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some("^[0-9]+[smhd]$")),
        )
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UpdateKey {
    #[schema(schema_with = schema::name)]
    name: Option<String>,
    #[schema(schema_with = scope_list)]
    scopes: Option<Vec<String>>,
    #[schema(minimum = 1, maximum = 1_000_000)]
    rate_limit: Option<i64>,
    /// False deactivates the key (it then answers 401).
    is_active: Option<bool>,
}

/// The create response: the key record plus its value, shown this once.
#[derive(Serialize, ToSchema)]
pub(crate) struct CreatedKey {
    #[serde(flatten)]
    record: ApiKey,
    /// The secret key: shown only in this response.
    key: String,
}

/// List API keys
///
/// Keys of the company in the requesting key's mode; never the secrets.
#[utoipa::path(get, path = "/api-keys", operation_id = "list_api_keys", tag = "API keys",
    params(PageQuery),
    responses((status = 200, description = "A page of keys (max 100)", body = Paged<ApiKey>)))]
async fn list(
    State(db): State<Db>,
    principal: Principal,
    Query(query): Query<PageQuery>,
) -> ApiResult<Json<Paged<ApiKey>>> {
    let page = Page::from_query(&query, 20, 100)?;
    let (keys, total) = store::list_page(&db, &principal.tenant, page.limit, page.offset).await?;
    Ok(Json(Paged::new(keys, total, page)))
}

/// Create an API key
///
/// The secret `key` is in this response only. A key can only grant scopes
/// it holds itself, an expiry no later than its own and a `rateLimit` no
/// higher than its own (403 otherwise).
#[utoipa::path(post, path = "/api-keys", operation_id = "create_api_key", tag = "API keys",
    request_body = CreateKey,
    responses(
        (status = 201, description = "Created; `key` is shown this once", body = CreatedKey),
    ))]
async fn create(
    RequestState(state): RequestState,
    principal: Principal,
    requested: Requested,
    Json(body): Json<CreateKey>,
) -> ApiResult<(StatusCode, Json<CreatedKey>)> {
    let (name, mode, scopes, rate_limit, expires_at) = (
        required_text("name", body.name.as_deref(), NAME_MAX),
        key_mode(body.mode.as_deref(), principal.tenant.mode),
        match &body.scopes {
            None => Err(problem("scopes", "is required")),
            Some(names) => scope_set(names),
        },
        rate_limit(body.rate_limit),
        expiry(
            body.expires_at.as_deref(),
            body.expires_in.as_ref(),
            state.clock.now(),
        ),
    )
        .all_valid()?;
    ensure_holds(&principal, &scopes)?;
    let caller = store::find(&state.db, &principal.tenant, principal.key_id).await?;
    // Left out, the limit is the default or the caller's own if lower, so a
    // capped key can mint without naming one.
    let rate_limit = rate_limit.unwrap_or_else(|| store::DEFAULT_RATE_LIMIT.min(caller.rate_limit));
    ensure_rate_within(&caller, rate_limit)?;
    ensure_expiry_within(&caller, expires_at, expiry_field(&body))?;
    let (record, key) = store::create(
        &principal.acting(&state.db, requested),
        NewKey {
            company_id: principal.tenant.company_id,
            name,
            mode,
            scopes,
            rate_limit,
            expires_at,
        },
        state.clock.now(),
    )
    .await?;
    // Digests remembered as unknown may include this one: forget them.
    cache::invalidate(
        &state.access.keys,
        &state.realtime.bus,
        Invalidation::KeyCreated,
    )
    .await;
    Ok((StatusCode::CREATED, Json(CreatedKey { record, key })))
}

/// Get an API key
#[utoipa::path(get, path = "/api-keys/{id}", operation_id = "get_api_key", tag = "API keys",
    params(("id" = uuid::Uuid, Path, description = "Key id")),
    responses((status = 200, description = "The key (no secret)", body = ApiKey)))]
async fn get_one(
    State(db): State<Db>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<ApiKey>> {
    Ok(Json(store::find(&db, &principal.tenant, id).await?))
}

/// Update an API key
///
/// Rename, change scopes or rate limit, deactivate or reactivate. Takes
/// effect on every node at once. A key can only grant scopes it holds and a
/// `rateLimit` no higher than its own (403 otherwise).
#[utoipa::path(patch, path = "/api-keys/{id}", operation_id = "update_api_key", tag = "API keys",
    request_body = UpdateKey,
    params(("id" = uuid::Uuid, Path, description = "Key id")),
    responses((status = 200, description = "The updated key", body = ApiKey)))]
#[allow(clippy::too_many_arguments)] // an axum handler: one extractor per handle it uses
async fn update(
    State(db): State<Db>,
    State(clock): State<Clock>,
    State(access): State<Arc<Access>>,
    State(realtime): State<Arc<Realtime>>,
    principal: Principal,
    requested: Requested,
    Id(id): Id,
    Json(body): Json<UpdateKey>,
) -> ApiResult<Json<ApiKey>> {
    let nothing_given = body.name.is_none()
        && body.scopes.is_none()
        && body.rate_limit.is_none()
        && body.is_active.is_none();
    let (_, name, scopes, rate_limit) = (
        ensure(
            !nothing_given,
            "body",
            "give at least one of: name, scopes, rateLimit, isActive",
        ),
        body.name
            .as_deref()
            .map(|raw| required_text("name", Some(raw), NAME_MAX))
            .transpose(),
        body.scopes.as_deref().map(scope_set).transpose(),
        rate_limit(body.rate_limit),
    )
        .all_valid()?;
    ensure_manages(&db, &principal, id).await?;
    if let Some(scopes) = &scopes {
        ensure_holds(&principal, scopes)?;
    }
    if let Some(rate_limit) = rate_limit {
        let caller = store::find(&db, &principal.tenant, principal.key_id).await?;
        ensure_rate_within(&caller, rate_limit)?;
    }
    let changes = KeyChanges {
        name,
        scopes,
        rate_limit,
        is_active: body.is_active,
    };
    let db = principal.acting(&db, requested);
    let updated = store::update(&db, &principal.tenant, id, changes, clock.now()).await?;
    cache::invalidate(&access.keys, &realtime.bus, Invalidation::Key(id)).await;
    credentials::key_changed(&db, &realtime.bus, id).await;
    Ok(Json(updated))
}

/// Revoke an API key
#[utoipa::path(delete, path = "/api-keys/{id}", operation_id = "revoke_api_key", tag = "API keys",
    params(("id" = uuid::Uuid, Path, description = "Key id")),
    responses((status = 204, description = "Revoked")))]
async fn revoke(
    State(db): State<Db>,
    State(clock): State<Clock>,
    State(access): State<Arc<Access>>,
    State(realtime): State<Arc<Realtime>>,
    principal: Principal,
    requested: Requested,
    Id(id): Id,
) -> ApiResult<StatusCode> {
    ensure_manages(&db, &principal, id).await?;
    let db = principal.acting(&db, requested);
    store::revoke_in(&db, &principal.tenant, id, clock.now()).await?;
    cache::invalidate(&access.keys, &realtime.bus, Invalidation::Key(id)).await;
    credentials::key_changed(&db, &realtime.bus, id).await;
    Ok(StatusCode::NO_CONTENT)
}

/// A key manages (activates, renames, changes, revokes) only a key whose
/// scopes it holds itself, a deactivated one included: 404 for a key of
/// another company or mode, else 403 naming the first scope it lacks. A
/// stored scope this build does not know (a newer build's, during a rolling
/// deploy) is one no key can be shown to hold here, so such a key is
/// managed on a node that knows it.
async fn ensure_manages(db: &Db, principal: &Principal, id: Uuid) -> ApiResult<()> {
    let target = store::find(db, &principal.tenant, id).await?;
    ensure_holds(principal, &target.scopes)?;
    let unknown = store::unknown_scopes(db, &principal.tenant, id).await?;
    match unknown.first() {
        Some(name) => Err(ApiError::forbidden_scope(name)),
        None => Ok(()),
    }
}

/// A key may only grant, or manage a key holding, scopes it holds itself:
/// otherwise 403 naming the first scope it lacks.
fn ensure_holds(principal: &Principal, scopes: &ScopeSet) -> Result<(), ApiError> {
    match scopes.iter().find(|s| !principal.scopes.contains(*s)) {
        Some(missing) => Err(ApiError::forbidden_scope(missing.as_str())),
        None => Ok(()),
    }
}

/// The caller's stored record, not its cached principal, is the cap: a
/// limit lowered a moment ago already binds.
fn ensure_rate_within(caller: &ApiKey, rate_limit: i64) -> Result<(), ApiError> {
    if rate_limit > caller.rate_limit {
        return Err(beyond_caller(format!(
            "Cannot grant a rateLimit above the calling key's ({})",
            caller.rate_limit
        )));
    }
    Ok(())
}

/// A key that expires can only mint keys that expire no later than it does,
/// or minting would outlive its own expiry.
fn ensure_expiry_within(
    caller: &ApiKey,
    expires_at: Option<Timestamp>,
    field: &str,
) -> Result<(), ApiError> {
    let Some(own) = caller.expires_at else {
        return Ok(());
    };
    match expires_at {
        None => Err(beyond_caller(format!(
            "Cannot grant a key without expiresAt or expiresIn: the calling key expires at {own}"
        ))),
        Some(at) if at > own => Err(beyond_caller(format!(
            "Cannot grant an {field} later than the calling key's expiry ({own})"
        ))),
        Some(_) => Ok(()),
    }
}

/// The expiry field the request used, to name it in a refusal.
fn expiry_field(body: &CreateKey) -> &'static str {
    if body.expires_in.is_some() {
        "expiresIn"
    } else {
        "expiresAt"
    }
}

/// Exceeding the caller's own limits is refused like scope escalation.
fn beyond_caller(message: String) -> ApiError {
    ApiError::new(StatusCode::FORBIDDEN, ErrorCode::InsufficientScope, message)
}

pub(crate) fn scope_set(names: &[String]) -> Result<ScopeSet, FieldError> {
    if names.is_empty() {
        return Err(problem("scopes", "must list at least one scope"));
    }
    let unknown: Vec<&str> = names
        .iter()
        .map(|n| n.trim())
        .filter(|n| Scope::parse(n).is_none())
        .collect();
    if !unknown.is_empty() {
        let allowed: Vec<&str> = Scope::ALL.iter().map(|s| s.as_str()).collect();
        return Err(problem(
            "scopes",
            format!(
                "unknown scopes: {}; allowed: {}",
                unknown.join(", "),
                allowed.join(", ")
            ),
        ));
    }
    Ok(ScopeSet::from_scopes(
        names.iter().filter_map(|n| Scope::parse(n.trim())),
    ))
}

pub(crate) fn rate_limit(value: Option<i64>) -> Result<Option<i64>, FieldError> {
    match value {
        Some(value) if !(1..=MAX_RATE_LIMIT).contains(&value) => Err(problem(
            "rateLimit",
            format!("must be between 1 and {MAX_RATE_LIMIT} requests per window"),
        )),
        value => Ok(value),
    }
}

/// The `type` of a new key: absent means the requester's own mode, and a
/// key can only create keys of its own mode.
fn key_mode(raw: Option<&str>, own: Mode) -> Result<Mode, FieldError> {
    let mode = match raw {
        None => return Ok(own),
        Some("TEST") => Mode::Test,
        Some("LIVE") => Mode::Live,
        Some(_) => return Err(problem("type", "must be one of: TEST, LIVE")),
    };
    if mode == own {
        Ok(mode)
    } else {
        let own = own.as_api();
        Err(problem(
            "type",
            format!("a {own} key can only create {own} keys"),
        ))
    }
}

/// `expiresAt` (an RFC 3339 time after `now`, the node's clock) or
/// `expiresIn` (seconds, or `30d`, `12h`, `15m`, `45s`, counted from `now`),
/// not both; neither means the key never expires.
pub(crate) fn expiry(
    at: Option<&str>,
    within: Option<&serde_json::Value>,
    now: Timestamp,
) -> Result<Option<Timestamp>, FieldError> {
    let latest = now.plus(std::time::Duration::from_secs(MAX_EXPIRY_SECS));
    match (at, within) {
        (Some(_), Some(_)) => Err(problem(
            "expiresIn",
            "give either expiresAt or expiresIn, not both",
        )),
        (Some(raw), None) => {
            let parsed = serde_json::from_value::<Timestamp>(serde_json::json!(raw.trim()));
            match parsed {
                Ok(at) if at > now && at <= latest => Ok(Some(at)),
                Ok(_) => Err(problem(
                    "expiresAt",
                    "must be in the future (and within 100 years)",
                )),
                Err(_) => Err(problem(
                    "expiresAt",
                    "must be an RFC 3339 time, e.g. 2026-12-31T00:00:00Z",
                )),
            }
        }
        (None, Some(value)) => {
            let seconds = match value {
                serde_json::Value::Number(n) => n.as_u64(),
                serde_json::Value::String(s)
                    if s.is_ascii() && (2..=12).contains(&s.trim().len()) =>
                {
                    crate::time::parse_duration(s).ok().map(|d| d.as_secs())
                }
                _ => None,
            };
            match seconds {
                Some(s) if (1..=MAX_EXPIRY_SECS).contains(&s) => {
                    Ok(Some(now.plus(std::time::Duration::from_secs(s))))
                }
                _ => Err(problem(
                    "expiresIn",
                    "must be a positive number of seconds or a duration such as 30d, 12h, 15m, 45s (at most 100 years)",
                )),
            }
        }
        (None, None) => Ok(None),
    }
}
