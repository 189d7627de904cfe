//! `/users`: list, create (emits `user.created`), get, update. Users are the
//! company's agents and admins, shared by both modes.

use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::routes;

use super::model::Role;
use super::store::{self, NewUser, User, UserChanges};
use crate::accounts::AccountDeps;
use crate::auth::{Principal, Scope, ScopeSet};
use crate::db::Db;
use crate::error::{ApiError, ApiResult, FieldError, StoreError};
use crate::extract::{Id, Json, Query, Requested};
use crate::idempotency::RequestState;
use crate::openapi::schema::{self, ErrorBody};
use crate::roles::routes::ensure_holds;
use crate::roles::store as roles;
use crate::roles::{BuiltInRole, RoleRef};
use crate::router::ApiRouter;
use crate::validate::{
    Fields, NAME_MAX, Page, PageQuery, Paged, ensure, optional_email, problem, required_text,
};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::UsersRead, routes!(list))
        .route(Scope::UsersWrite, routes!(create))
        .route(Scope::UsersRead, routes!(get_one))
        .route(Scope::UsersWrite, routes!(update))
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateUser {
    #[schema(schema_with = schema::name, required)]
    name: Option<String>,
    /// Unique within the company (compared case-insensitively).
    #[schema(schema_with = schema::email, required)]
    email: Option<String>,
    /// AGENT or ADMIN (the built-in agent or admin role), or a role's name
    /// as `roleName`; not together with `roleName`. Defaults to AGENT.
    #[schema(schema_with = crate::users::model::role_schema)]
    role: Option<String>,
    /// `owner`, `admin`, `agent`, `viewer` or a custom role's name; only a
    /// role whose scopes the requesting key holds itself.
    role_name: Option<String>,
    /// Email the user a one-time link (valid 7 days) to choose a password
    /// and sign in.
    invite: Option<bool>,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UpdateUser {
    #[schema(schema_with = schema::name)]
    name: Option<String>,
    #[schema(schema_with = schema::email)]
    email: Option<String>,
    #[schema(schema_with = crate::users::model::role_schema)]
    role: Option<String>,
    role_name: Option<String>,
    /// False deactivates the user.
    is_active: Option<bool>,
}

/// The role a request names, and the field that named it.
struct AskedRole {
    field: &'static str,
    name: String,
}

/// `role` (AGENT, ADMIN, or a role's name) or `roleName`, not both.
fn asked_role(
    role: Option<&str>,
    role_name: Option<&str>,
) -> Result<Option<AskedRole>, FieldError> {
    match (role, role_name) {
        (Some(_), Some(_)) => Err(problem(
            "roleName",
            "give either role or roleName, not both",
        )),
        (Some(raw), None) => {
            // AGENT or ADMIN (the API's original role values, docs/api.md "Users") names the built-in role of that name.
            let name = match raw.parse::<Role>() {
                Ok(role) => RoleRef::from(role).name().to_string(),
                Err(_) => raw.to_string(),
            };
            Ok(Some(AskedRole {
                field: "role",
                name,
            }))
        }
        (None, Some(raw)) => Ok(Some(AskedRole {
            field: "roleName",
            name: raw.to_string(),
        })),
        (None, None) => Ok(None),
    }
}

/// The role `asked` names with its scopes, if the company has it; a field
/// error on the field that named it otherwise (so it is listed with the
/// body's other problems).
async fn looked_up(
    db: &Db,
    company_id: uuid::Uuid,
    asked: Result<Option<AskedRole>, FieldError>,
) -> ApiResult<Result<Option<(RoleRef, ScopeSet)>, FieldError>> {
    let asked = match asked {
        Ok(Some(asked)) => asked,
        Ok(None) => return Ok(Ok(None)),
        Err(problem) => return Ok(Err(problem)),
    };
    match roles::role_named(db, company_id, &asked.name).await {
        Ok(found) => Ok(Ok(Some(found))),
        Err(StoreError::NotFound) => Ok(Err(problem(
            asked.field,
            format!(
                "names no role of the company (built-in: {}; or a custom role's name)",
                BuiltInRole::NAMES.join(", ")
            ),
        ))),
        Err(other) => Err(other.into()),
    }
}

/// The role `asked` names, if the company has it (400 on the field that
/// named it otherwise) and the key holds every scope of it (403 naming the
/// first it lacks): a key gives no user more than it may do itself, so
/// only a key holding every scope makes an owner.
async fn granted_role(db: &Db, principal: &Principal, asked: AskedRole) -> ApiResult<RoleRef> {
    let company_id = principal.tenant.company_id;
    match looked_up(db, company_id, Ok(Some(asked))).await? {
        Ok(Some((role, scopes))) => {
            ensure_holds(principal, &scopes)?;
            Ok(role)
        }
        Ok(None) => Err(ApiError::internal()),
        Err(problem) => Err(ApiError::validation(vec![problem])),
    }
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
    State(db): State<Db>,
    principal: Principal,
    Query(query): Query<PageQuery>,
) -> ApiResult<Json<Paged<User>>> {
    let page = Page::from_query(&query, 20, 100)?;
    let (users, total) =
        store::list(&db, principal.tenant.company_id, page.limit, page.offset).await?;
    Ok(Json(Paged::new(users, total, page)))
}

/// Create a user
///
/// Emits `user.created`. A role (`role` or `roleName`) must be one the
/// company has, with scopes the requesting key holds (403 otherwise). With
/// `invite: true` the user is emailed a link to choose a password.
#[utoipa::path(post, path = "/users", operation_id = "create_user", tag = "Users",
    request_body = CreateUser,
    responses(
        (status = 201, description = "Created", body = User),
        (status = 409, description = "The email is taken", body = ErrorBody),
    ))]
async fn create(
    RequestState(state): RequestState,
    principal: Principal,
    requested: Requested,
    Json(body): Json<CreateUser>,
) -> ApiResult<(StatusCode, Json<User>)> {
    let asked = asked_role(body.role.as_deref(), body.role_name.as_deref());
    let found = looked_up(&state.db, principal.tenant.company_id, asked).await?;
    let (name, email, found) = (
        required_text("name", body.name.as_deref(), NAME_MAX),
        email(body.email.as_deref()),
        found,
    )
        .all_valid()?;
    let role = match found {
        Some((role, scopes)) => {
            ensure_holds(&principal, &scopes)?;
            role
        }
        None => Role::Agent.into(),
    };
    let new = NewUser {
        id: None,
        name,
        email,
        role,
    };
    let db = principal.acting(&state.db, requested);
    let user = store::create(&db, &principal.tenant, new, state.clock.now())
        .await
        .map_err(taken)?;
    if body.invite == Some(true) {
        let company_id = principal.tenant.company_id;
        crate::accounts::links::invite(
            &AccountDeps::from_ref(&state),
            &db,
            company_id,
            user.id,
            &user.email,
        )
        .await?;
    }
    Ok((StatusCode::CREATED, Json(user)))
}

/// Get a user
#[utoipa::path(get, path = "/users/{id}", operation_id = "get_user", tag = "Users",
    params(("id" = uuid::Uuid, Path, description = "User id")),
    responses((status = 200, description = "The user", body = User)))]
async fn get_one(State(db): State<Db>, principal: Principal, Id(id): Id) -> ApiResult<Json<User>> {
    Ok(Json(
        store::find(&db, principal.tenant.company_id, id).await?,
    ))
}

/// Update a user
///
/// Changing `role`/`roleName` or `isActive` needs a key holding the user's
/// present role's scopes and the new role's (403 otherwise).
#[utoipa::path(patch, path = "/users/{id}", operation_id = "update_user", tag = "Users",
    request_body = UpdateUser,
    params(("id" = uuid::Uuid, Path, description = "User id")),
    responses(
        (status = 200, description = "The updated user", body = User),
        (status = 409, description = "The email is taken", body = ErrorBody),
    ))]
async fn update(
    State(state): State<AccountDeps>,
    principal: Principal,
    requested: Requested,
    Id(id): Id,
    Json(body): Json<UpdateUser>,
) -> ApiResult<Json<User>> {
    let nothing_given = body.name.is_none()
        && body.email.is_none()
        && body.role.is_none()
        && body.role_name.is_none()
        && body.is_active.is_none();
    let (_, name, email, asked) = (
        ensure(
            !nothing_given,
            "body",
            "give at least one of: name, email, role, roleName, isActive",
        ),
        body.name
            .as_deref()
            .map(|raw| required_text("name", Some(raw), NAME_MAX))
            .transpose(),
        body.email
            .as_deref()
            .map(|raw| email(Some(raw)))
            .transpose(),
        asked_role(body.role.as_deref(), body.role_name.as_deref()),
    )
        .all_valid()?;
    let company_id = principal.tenant.company_id;
    let before = if asked.is_some() || body.is_active.is_some() {
        // Who may change a user's role or deactivate them: a key holding
        // the user's present role, so an admin's key cannot demote an owner.
        let current = store::find(&state.db, company_id, id).await?;
        let held = roles::resolve(&state.db, company_id, &current.role_name).await?;
        ensure_holds(&principal, &held.scopes)?;
        Some(current)
    } else {
        None
    };
    let role = match asked {
        Some(asked) => Some(granted_role(&state.db, &principal, asked).await?),
        None => None,
    };
    let changes = UserChanges {
        name: name.as_deref(),
        email: email.as_deref(),
        role,
        is_active: body.is_active,
    };
    let db = principal.acting(&state.db, requested);
    let user = store::update(&db, company_id, id, changes, state.clock.now())
        .await
        .map_err(taken)?;
    // A new role is new rights, a deactivation none: the user's sessions
    // end (and their sockets close) on every node.
    let rights_changed = before.is_some_and(|before| {
        before.role_name != user.role_name || (before.is_active && !user.is_active)
    });
    if rights_changed {
        crate::accounts::end::all_sessions_of(&state, &db, company_id, id, None).await?;
    }
    Ok(Json(user))
}
