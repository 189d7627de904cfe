//! `/roles`: list (the built-in roles, then the company's custom ones),
//! create, get, update and delete a custom role. A key grants a role only
//! scopes it holds itself, and changes or deletes only a role whose scopes
//! it holds, as with keys.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::routes;

use super::model::{custom_name, scope_set};
use super::store::{self, Deleted, NewRole, Role, RolePatch};
use crate::auth::{Principal, Scope, ScopeSet};
use crate::db::Db;
use crate::error::{ApiError, ApiResult, ErrorCode, StoreError};
use crate::extract::{Id, Json, Query, Requested};
use crate::idempotency::RequestState;
use crate::openapi::schema::{self, ErrorBody};
use crate::router::ApiRouter;
use crate::time::Clock;
use crate::validate::{Fields, Page, PageQuery, Paged, ensure, problem};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::RolesRead, routes!(list))
        .route(Scope::RolesWrite, routes!(create))
        .route(Scope::RolesRead, routes!(get_one))
        .route(Scope::RolesWrite, routes!(update))
        .route(Scope::RolesWrite, routes!(delete))
}

#[derive(Deserialize, ToSchema)]
#[schema(as = RoleInput)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RoleBody {
    /// Unique in the company whatever its case; not a built-in role's name.
    #[schema(schema_with = schema::name)]
    name: Option<String>,
    /// At least one; only scopes the requesting key holds itself.
    #[schema(schema_with = scope_list)]
    scopes: Option<Vec<String>>,
    /// Limits a holder's visibility to the holder's teams (default false).
    teams_only: Option<bool>,
}

fn scope_list() -> utoipa::openapi::schema::ArrayBuilder {
    utoipa::openapi::schema::ArrayBuilder::new()
        .items(schema::scope_name())
        .min_items(Some(1))
}

fn taken(error: StoreError) -> ApiError {
    match error {
        StoreError::Conflict(_) => ApiError::conflict("A role with this name already exists"),
        other => other.into(),
    }
}

/// A key may only grant, or manage a role holding, scopes it holds itself:
/// otherwise 403 naming the first scope it lacks.
pub(crate) fn ensure_holds(principal: &Principal, scopes: &ScopeSet) -> Result<(), ApiError> {
    match scopes.iter().find(|s| !principal.scopes.contains(*s)) {
        Some(missing) => Err(ApiError::forbidden_scope(missing.as_str())),
        None => Ok(()),
    }
}

/// List roles
///
/// The built-in roles (`builtIn: true`, no id) first, then the company's
/// custom roles by name.
#[utoipa::path(get, path = "/roles", operation_id = "list_roles", tag = "Roles",
    params(PageQuery),
    responses((status = 200, description = "A page of roles (max 100)", body = Paged<Role>)))]
async fn list(
    State(db): State<Db>,
    principal: Principal,
    Query(query): Query<PageQuery>,
) -> ApiResult<Json<Paged<Role>>> {
    let page = Page::from_query(&query, 20, 100)?;
    let (roles, total) =
        store::list(&db, principal.tenant.company_id, page.limit, page.offset).await?;
    Ok(Json(Paged::new(roles, total, page)))
}

/// Create a custom role
///
/// `name` and `scopes` are required. A key can only grant scopes it holds
/// itself (403 otherwise).
#[utoipa::path(post, path = "/roles", operation_id = "create_role", tag = "Roles",
    request_body = RoleBody,
    responses(
        (status = 201, description = "Created", body = Role),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ))]
async fn create(
    RequestState(state): RequestState,
    principal: Principal,
    requested: Requested,
    Json(body): Json<RoleBody>,
) -> ApiResult<(StatusCode, Json<Role>)> {
    let (name, scopes) = (
        custom_name("name", body.name.as_deref()),
        match &body.scopes {
            None => Err(problem("scopes", "is required")),
            Some(names) => scope_set("scopes", names),
        },
    )
        .all_valid()?;
    ensure_holds(&principal, &scopes)?;
    let new = NewRole {
        name,
        scopes,
        teams_only: body.teams_only.unwrap_or(false),
    };
    let role = store::create(
        &principal.acting(&state.db, requested),
        principal.tenant.company_id,
        &new,
        state.clock.now(),
    )
    .await
    .map_err(taken)?;
    Ok((StatusCode::CREATED, Json(role)))
}

/// Get a custom role
#[utoipa::path(get, path = "/roles/{id}", operation_id = "get_role", tag = "Roles",
    params(("id" = uuid::Uuid, Path, description = "Role id")),
    responses((status = 200, description = "The role", body = Role)))]
async fn get_one(State(db): State<Db>, principal: Principal, Id(id): Id) -> ApiResult<Json<Role>> {
    Ok(Json(
        store::find(&db, principal.tenant.company_id, id).await?,
    ))
}

/// Update a custom role
///
/// Rename it, change its scopes or `teamsOnly`; its holders keep it (and
/// their open sockets follow its new scopes). A key
/// can only change a role whose scopes it holds, and grant only scopes it
/// holds (403 otherwise).
#[utoipa::path(patch, path = "/roles/{id}", operation_id = "update_role", tag = "Roles",
    request_body = RoleBody,
    params(("id" = uuid::Uuid, Path, description = "Role id")),
    responses(
        (status = 200, description = "The updated role", body = Role),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ))]
async fn update(
    State(db): State<Db>,
    State(clock): State<Clock>,
    RequestState(state): RequestState,
    principal: Principal,
    requested: Requested,
    Id(id): Id,
    Json(body): Json<RoleBody>,
) -> ApiResult<Json<Role>> {
    let nothing_given = body.name.is_none() && body.scopes.is_none() && body.teams_only.is_none();
    let (_, name, scopes) = (
        ensure(
            !nothing_given,
            "body",
            "give at least one of: name, scopes, teamsOnly",
        ),
        body.name
            .as_deref()
            .map(|raw| custom_name("name", Some(raw)))
            .transpose(),
        body.scopes
            .as_deref()
            .map(|names| scope_set("scopes", names))
            .transpose(),
    )
        .all_valid()?;
    let company_id = principal.tenant.company_id;
    let current = store::find(&db, company_id, id).await?;
    ensure_holds(&principal, &current.scopes)?;
    if let Some(scopes) = &scopes {
        ensure_holds(&principal, scopes)?;
    }
    let scopes_changed = scopes.is_some();
    let patch = RolePatch {
        name,
        scopes,
        teams_only: body.teams_only,
    };
    let acting = principal.acting(&db, requested);
    let role = store::update(&acting, company_id, id, &patch, clock.now())
        .await
        .map_err(taken)?;
    if scopes_changed {
        // The holders' open sockets read and write what the role allows
        // now, on every node, as a key's do when its scopes change.
        let idle = state.access.session_idle;
        let bus = &state.realtime.bus;
        crate::realtime::credentials::role_changed(&db, bus, &clock, idle, company_id, id).await;
    }
    Ok(Json(role))
}

/// Delete a custom role
///
/// 409 `role_in_use` while a user holds it: give them another role first.
/// A key can only delete a role whose scopes it holds (403 otherwise).
#[utoipa::path(delete, path = "/roles/{id}", operation_id = "delete_role", tag = "Roles",
    params(("id" = uuid::Uuid, Path, description = "Role id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 409, description = "`role_in_use`: a user holds the role", body = ErrorBody),
    ))]
async fn delete(
    State(db): State<Db>,
    State(clock): State<Clock>,
    principal: Principal,
    requested: Requested,
    Id(id): Id,
) -> ApiResult<StatusCode> {
    let company_id = principal.tenant.company_id;
    let current = store::find(&db, company_id, id).await?;
    ensure_holds(&principal, &current.scopes)?;
    let db = principal.acting(&db, requested);
    match store::delete(&db, company_id, id, clock.now()).await? {
        Deleted::Deleted => Ok(StatusCode::NO_CONTENT),
        Deleted::InUse => Err(ApiError::new(
            StatusCode::CONFLICT,
            ErrorCode::RoleInUse,
            "A user holds this role: give them another role first",
        )),
    }
}
