//! `/users`: list, create (emits `user.created`), get, update. Users are the
//! company's agents and admins, shared by both modes.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::routes;

use super::model::Role;
use super::store::{self, NewUser, User};
use crate::auth::{Principal, Scope};
use crate::error::{ApiError, ApiResult, FieldError, StoreError};
use crate::extract::{Id, Json, Query};
use crate::idempotency::RequestState;
use crate::openapi::schema::{self, ErrorBody};
use crate::router::ApiRouter;
use crate::state::AppState;
use crate::validate::{
    Fields, NAME_MAX, Page, PageQuery, Paged, ensure, optional_email, optional_enum, problem,
    required_text,
};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::UsersRead, routes!(list))
        .route(Scope::UsersWrite, routes!(create))
        .route(Scope::UsersRead, routes!(get_one))
        .route(Scope::UsersWrite, routes!(update))
}

#[derive(Deserialize, ToSchema)]
pub(crate) struct CreateUser {
    #[schema(schema_with = schema::name, required)]
    name: Option<String>,
    /// Unique within the company (compared case-insensitively).
    #[schema(schema_with = schema::email, required)]
    email: Option<String>,
    /// Defaults to AGENT.
    #[schema(schema_with = crate::users::model::role_schema)]
    role: Option<String>,
    /// Email the user a one-time link (valid 7 days) to choose a password
    /// and sign in.
    invite: Option<bool>,
}

#[derive(Deserialize, ToSchema)]
pub(crate) struct UpdateUser {
    #[schema(schema_with = schema::name)]
    name: Option<String>,
    #[schema(schema_with = schema::email)]
    email: Option<String>,
    #[schema(schema_with = crate::users::model::role_schema)]
    role: Option<String>,
}

/// Emails are compared case-insensitively: they are stored lower case.
fn email(raw: Option<&str>) -> Result<String, FieldError> {
    optional_email("email", raw)?
        .map(|e| e.to_lowercase())
        .ok_or_else(|| problem("email", "is required"))
}

fn taken(error: StoreError) -> ApiError {
    match error {
        StoreError::Conflict(_) => ApiError::conflict("A user with this email already exists"),
        other => other.into(),
    }
}

/// List users
#[utoipa::path(get, path = "/users", operation_id = "list_users", tag = "Users",
    params(PageQuery),
    responses((status = 200, description = "A page of users (max 100)", body = Paged<User>)))]
async fn list(
    State(state): State<AppState>,
    principal: Principal,
    Query(query): Query<PageQuery>,
) -> ApiResult<Json<Paged<User>>> {
    let page = Page::from_query(&query, 20, 100)?;
    let (users, total) = store::list(
        &state.db,
        principal.tenant.company_id,
        page.limit,
        page.offset,
    )
    .await?;
    Ok(Json(Paged::new(users, total, page)))
}

/// Create a user
///
/// Emits `user.created`. With `invite: true` the user is emailed a link to
/// choose a password.
#[utoipa::path(post, path = "/users", operation_id = "create_user", tag = "Users",
    request_body = CreateUser,
    responses(
        (status = 201, description = "Created", body = User),
        (status = 409, description = "The email is taken", body = ErrorBody),
    ))]
async fn create(
    RequestState(state): RequestState,
    principal: Principal,
    Json(body): Json<CreateUser>,
) -> ApiResult<(StatusCode, Json<User>)> {
    let (name, email, role) = (
        required_text("name", body.name.as_deref(), NAME_MAX),
        email(body.email.as_deref()),
        optional_enum("role", body.role.as_deref()),
    )
        .all_valid()?;
    let new = NewUser {
        id: None,
        name,
        email,
        role: role.unwrap_or(Role::Agent),
    };
    let db = state.db.acting(principal.actor());
    let user = store::create(&db, &principal.tenant, new, state.clock.now())
        .await
        .map_err(taken)?;
    if body.invite == Some(true) {
        let company_id = principal.tenant.company_id;
        crate::accounts::links::invite(&state, company_id, user.id, &user.email).await?;
    }
    Ok((StatusCode::CREATED, Json(user)))
}

/// Get a user
#[utoipa::path(get, path = "/users/{id}", operation_id = "get_user", tag = "Users",
    params(("id" = uuid::Uuid, Path, description = "User id")),
    responses((status = 200, description = "The user", body = User)))]
async fn get_one(
    State(state): State<AppState>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<User>> {
    Ok(Json(
        store::find(&state.db, principal.tenant.company_id, id).await?,
    ))
}

/// Update a user
#[utoipa::path(patch, path = "/users/{id}", operation_id = "update_user", tag = "Users",
    request_body = UpdateUser,
    params(("id" = uuid::Uuid, Path, description = "User id")),
    responses(
        (status = 200, description = "The updated user", body = User),
        (status = 409, description = "The email is taken", body = ErrorBody),
    ))]
async fn update(
    State(state): State<AppState>,
    principal: Principal,
    Id(id): Id,
    Json(body): Json<UpdateUser>,
) -> ApiResult<Json<User>> {
    let nothing_given = body.name.is_none() && body.email.is_none() && body.role.is_none();
    let (_, name, email, role) = (
        ensure(
            !nothing_given,
            "body",
            "give at least one of: name, email, role",
        ),
        body.name
            .as_deref()
            .map(|raw| required_text("name", Some(raw), NAME_MAX))
            .transpose(),
        body.email
            .as_deref()
            .map(|raw| email(Some(raw)))
            .transpose(),
        optional_enum::<Role>("role", body.role.as_deref()),
    )
        .all_valid()?;
    let company_id = principal.tenant.company_id;
    let role_before = match role {
        Some(_) => Some(store::find(&state.db, company_id, id).await?.role),
        None => None,
    };
    let user = store::update(
        &state.db,
        principal.tenant.company_id,
        id,
        name.as_deref(),
        email.as_deref(),
        role,
        state.clock.now(),
    )
    .await
    .map_err(taken)?;
    // A new role is new rights: the user signs in again to hold them.
    if role_before.is_some_and(|before| before != user.role) {
        crate::accounts::end::all_sessions_of(&state, company_id, id, None).await?;
    }
    Ok(Json(user))
}
