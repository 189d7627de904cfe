//! `/api/v1/auth/keys`: an agent's personal API keys. A signed-in agent
//! mints keys for their own use (scripts, integrations of their own): such
//! a key acts as the agent (its changes name them), never holds a scope
//! the agent's role does not (asked for one, 403 naming every one), holds
//! no more than the role holds now when the role narrows, and stops
//! working when the agent is deactivated or removed (docs/api.md,
//! "Personal API keys").

use std::sync::Arc;

use axum::Json as AxumJson;
use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::signed_in::SignedIn;
use crate::auth::ScopeSet;
use crate::auth::access::Access;
use crate::auth::cache::{self, Invalidation};
use crate::auth::session::AGENT_RATE_LIMIT;
use crate::db::Db;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Id, Json};
use crate::keys::routes::{expiry, rate_limit, scope_set};
use crate::keys::{ApiKey, NewKey, store};
use crate::openapi::schema::ErrorBody;
use crate::realtime::Realtime;
use crate::state::AppState;
use crate::time::Clock;
use crate::validate::{Fields, NAME_MAX, problem, required_text};

/// The routes with their OpenAPI operations.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(revoke))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = PersonalKeyCreate)]
#[serde(rename_all = "camelCase")]
struct CreateKey {
    #[schema(schema_with = crate::openapi::schema::name, required)]
    name: Option<String>,
    /// Scopes the agent's role holds.
    #[schema(schema_with = crate::keys::routes::scope_list, required)]
    scopes: Option<Vec<String>>,
    #[schema(minimum = 1, maximum = 10_000)]
    rate_limit: Option<i64>,
    #[schema(value_type = Option<String>, format = DateTime)]
    expires_at: Option<String>,
    /// Seconds (a number) or a duration such as `"30d"`, `"12h"`.
    #[schema(schema_with = crate::keys::routes::expires_in)]
    expires_in: Option<serde_json::Value>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = PersonalKeyCreated)]
struct CreatedKey {
    #[serde(flatten)]
    record: ApiKey,
    /// The secret key: shown only in this response.
    key: String,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = PersonalKeyList)]
struct KeyList {
    data: Vec<ApiKey>,
}

/// Mint a personal key
///
/// A key that acts as the signed-in agent, holding no scope their role
/// does not (403 naming each one asked for beyond it). The secret is in
/// this answer only.
#[utoipa::path(post, path = "/api/v1/auth/keys", operation_id = "create_personal_key",
    tag = "Agent sign-in",
    request_body = CreateKey,
    responses((status = 201, description = "Minted", body = CreatedKey)))]
async fn create(
    State(db): State<Db>,
    State(clock): State<Clock>,
    State(realtime): State<Arc<Realtime>>,
    State(access): State<Arc<Access>>,
    signed_in: SignedIn,
    Json(body): Json<CreateKey>,
) -> ApiResult<(StatusCode, AxumJson<CreatedKey>)> {
    let (name, scopes, rate_limit, expires_at) = (
        required_text("name", body.name.as_deref(), NAME_MAX),
        match &body.scopes {
            None => Err(problem("scopes", "is required")),
            Some(names) => scope_set(names),
        },
        rate_limit(body.rate_limit).and_then(|limit| match limit {
            Some(limit) if limit > AGENT_RATE_LIMIT => Err(problem(
                "rateLimit",
                format!("must be at most {AGENT_RATE_LIMIT}, an agent's own allowance"),
            )),
            limit => Ok(limit),
        }),
        expiry(
            body.expires_at.as_deref(),
            body.expires_in.as_ref(),
            clock.now(),
        ),
    )
        .all_valid()?;
    ensure_role_holds(&signed_in.principal.scopes, &scopes)?;
    let tenant = signed_in.principal.tenant;
    let new = NewKey {
        company_id: tenant.company_id,
        name,
        mode: tenant.mode,
        scopes,
        rate_limit: rate_limit.unwrap_or(store::DEFAULT_RATE_LIMIT),
        expires_at,
    };
    let now = clock.now();
    let (record, key) = store::create_personal(&db, new, signed_in.user_id(), now).await?;
    // Digests remembered as unknown may include this one: forget them.
    let bus = &realtime.bus;
    cache::invalidate(&access.keys, bus, Invalidation::KeyCreated).await;
    Ok((StatusCode::CREATED, AxumJson(CreatedKey { record, key })))
}

/// 403 naming every scope asked for that the agent's role does not hold.
fn ensure_role_holds(held: &ScopeSet, asked: &ScopeSet) -> ApiResult<()> {
    let missing: Vec<&str> = asked
        .iter()
        .filter(|scope| !held.contains(*scope))
        .map(|scope| scope.as_str())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(ApiError::forbidden_scope(&missing.join(", ")))
}

/// List one's personal keys
#[utoipa::path(get, path = "/api/v1/auth/keys", operation_id = "list_personal_keys",
    tag = "Agent sign-in",
    responses((status = 200, description = "The agent's personal keys", body = KeyList)))]
async fn list(State(db): State<Db>, signed_in: SignedIn) -> ApiResult<AxumJson<KeyList>> {
    let tenant = signed_in.principal.tenant;
    let data = store::list_personal(&db, &tenant, signed_in.user_id()).await?;
    Ok(AxumJson(KeyList { data }))
}

/// Revoke one's personal key
#[utoipa::path(delete, path = "/api/v1/auth/keys/{id}", operation_id = "revoke_personal_key",
    tag = "Agent sign-in",
    params(("id" = uuid::Uuid, Path, description = "Key id")),
    responses(
        (status = 204, description = "Revoked"),
        (status = 404, description = "No such key of this agent", body = ErrorBody),
    ))]
async fn revoke(
    State(db): State<Db>,
    State(realtime): State<Arc<Realtime>>,
    State(access): State<Arc<Access>>,
    signed_in: SignedIn,
    Id(id): Id,
) -> ApiResult<StatusCode> {
    store::revoke_personal(&db, signed_in.user_id(), id).await?;
    let bus = &realtime.bus;
    cache::invalidate(&access.keys, bus, Invalidation::Key(id)).await;
    Ok(StatusCode::NO_CONTENT)
}
