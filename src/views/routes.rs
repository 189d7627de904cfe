//! `/views`: list, create, get, update and delete saved views, and
//! `GET /views/{id}/tickets`, the ticket list with a view's filters. A
//! personal view belongs to the agent who made it (signed in, or by their
//! personal key) and is NotFound to everyone else; a shared one is every
//! agent's. Reading needs `tickets:read`, changing `tickets:write`, as the
//! ticket list and its tickets do.

use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::routes;

use super::filters;
use super::{NewView, Sort, View, Visibility, store};
use crate::auth::{Principal, Scope};
use crate::db::Db;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Id, Json, Query};
use crate::idempotency::RequestState;
use crate::openapi::schema::{self, DataList, Deleted, ErrorBody};
use crate::paging::{COUNT_CAP, CursorPage, ListRequest};
use crate::router::ApiRouter;
use crate::tickets::Ticket;
use crate::tickets::TicketReads;
use crate::tickets::listing::{LIST_DEFAULT, LIST_MAX, page_of};
use crate::tickets::store as ticket_store;
use crate::validate::{Fields, NAME_MAX, optional_enum, required_enum, required_text};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::TicketsRead, routes!(list))
        .route(Scope::TicketsWrite, routes!(create))
        .route(Scope::TicketsRead, routes!(get_one))
        .route(Scope::TicketsWrite, routes!(update))
        .route(Scope::TicketsWrite, routes!(delete))
        .route(Scope::TicketsRead, routes!(tickets))
}

fn visibility_schema() -> utoipa::openapi::ObjectBuilder {
    schema::enum_of(&["personal", "shared"])
}

fn sort_schema() -> utoipa::openapi::ObjectBuilder {
    schema::enum_of(&["newest", "sla_due"])
}

#[derive(Deserialize, ToSchema)]
#[schema(as = ViewInput)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ViewBody {
    /// Required on create.
    #[schema(schema_with = schema::name)]
    name: Option<String>,
    /// `personal` (only its agent sees it; needs an agent: a session or a
    /// personal key) or `shared`. Required on create.
    #[schema(schema_with = visibility_schema)]
    visibility: Option<String>,
    /// The ticket list's filters by their query parameter names:
    /// `ticketNumber`, `entityId`, `status`, `priority`, `assignedToId`,
    /// `assigned`, `teamId`, `q`, `slaBreached`, `slaDueBefore`, `snoozed`, `tag` and
    /// `anyTag` (a list or comma-separated), `cf.<key>` and
    /// `cf.<key>[op]`. Checked as the list checks them. On update it
    /// replaces the filters whole.
    #[schema(value_type = Option<Object>)]
    filters: Option<Value>,
    /// `newest` (default on create) or `sla_due`.
    #[schema(schema_with = sort_schema)]
    sort: Option<String>,
}

/// The owner a view of `visibility` gets: the acting agent for a personal
/// one (a company key has none: 400), none for a shared one.
fn owner(principal: &Principal, visibility: Visibility) -> Result<Option<uuid::Uuid>, ApiError> {
    match (visibility, principal.acting_user()) {
        (Visibility::Shared, _) => Ok(None),
        (Visibility::Personal, Some(agent)) => Ok(Some(agent)),
        (Visibility::Personal, None) => Err(ApiError::invalid_field(
            "visibility",
            "a personal view belongs to an agent: sign in or use a personal key",
        )),
    }
}

/// List saved views
///
/// The shared views and the caller's personal ones, by name (at most
/// 1,000).
#[utoipa::path(get, path = "/views", operation_id = "list_views", tag = "Views",
    responses((status = 200, description = "The views", body = DataList<View>)))]
async fn list(State(db): State<Db>, principal: Principal) -> ApiResult<Json<DataList<View>>> {
    let data = store::list(&db, &principal.tenant, principal.acting_user()).await?;
    Ok(Json(DataList { data }))
}

/// Create a saved view
///
/// `name` and `visibility` are required; `filters` are checked as the
/// ticket list checks its query parameters. At most 1,000 per company and
/// mode (409 beyond).
#[utoipa::path(post, path = "/views", operation_id = "create_view", tag = "Views",
    request_body = ViewBody,
    responses(
        (status = 201, description = "Created", body = View),
        (status = 409, description = "The company has 1,000 views already", body = ErrorBody),
    ))]
async fn create(
    RequestState(state): RequestState,
    principal: Principal,
    Json(body): Json<ViewBody>,
) -> ApiResult<(StatusCode, Json<View>)> {
    let (name, visibility, sort) = (
        required_text("name", body.name.as_deref(), NAME_MAX),
        required_enum::<Visibility>("visibility", body.visibility.as_deref()),
        optional_enum::<Sort>("sort", body.sort.as_deref()),
    )
        .all_valid()?;
    let sort = sort.unwrap_or(Sort::Newest);
    let (_, filters) = filters::check(
        &TicketReads::from_ref(&state),
        &principal,
        body.filters.as_ref(),
        sort,
    )
    .await?;
    let new = NewView {
        name,
        visibility,
        owner_id: owner(&principal, visibility)?,
        filters,
        sort,
    };
    let created = store::create(&state.db, &principal.tenant, new, state.clock.now()).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

/// A view with the number of tickets it holds now.
#[derive(Serialize, ToSchema)]
#[schema(as = ViewWithCount)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CountedView {
    #[serde(flatten)]
    view: View,
    /// How many tickets its filters select now.
    count: i64,
    /// Present (true) when counting stopped at 10,000: at least `count`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schema(value_type = Option<bool>)]
    count_is_lower_bound: bool,
}

/// Get a saved view
///
/// The view and `count`, the number of tickets its filters select now.
#[utoipa::path(get, path = "/views/{id}", operation_id = "get_view", tag = "Views",
    params(("id" = uuid::Uuid, Path, description = "View id")),
    responses((status = 200, description = "The view and its count", body = CountedView)))]
async fn get_one(
    State(state): State<TicketReads>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<CountedView>> {
    let view = store::find(&state.db, &principal.tenant, principal.acting_user(), id).await?;
    let stored = Value::Object(view.filters.clone());
    let (filter, _) = filters::check(&state, &principal, Some(&stored), view.sort).await?;
    let total = ticket_store::count(&state.db, &principal.tenant, &filter, COUNT_CAP).await?;
    Ok(Json(CountedView {
        view,
        count: total.value,
        count_is_lower_bound: total.is_lower_bound,
    }))
}

/// Update a saved view
///
/// Changes what it names; `filters` replaces the filters whole.
#[utoipa::path(patch, path = "/views/{id}", operation_id = "update_view", tag = "Views",
    request_body = ViewBody,
    params(("id" = uuid::Uuid, Path, description = "View id")),
    responses((status = 200, description = "The view", body = View)))]
async fn update(
    State(state): State<TicketReads>,
    principal: Principal,
    Id(id): Id,
    Json(body): Json<ViewBody>,
) -> ApiResult<Json<View>> {
    let viewer = principal.acting_user();
    let (name, visibility, sort) = (
        body.name
            .as_deref()
            .map(|name| required_text("name", Some(name), NAME_MAX))
            .transpose(),
        optional_enum::<Visibility>("visibility", body.visibility.as_deref()),
        optional_enum::<Sort>("sort", body.sort.as_deref()),
    )
        .all_valid()?;
    let current = store::find(&state.db, &principal.tenant, viewer, id).await?;
    let sort = sort.unwrap_or(current.sort);
    let filters = match &body.filters {
        Some(raw) => Some(raw.clone()),
        None => Some(Value::Object(current.filters)),
    };
    let (_, filters) = filters::check(&state, &principal, filters.as_ref(), sort).await?;
    let visibility = visibility.unwrap_or(current.visibility);
    let owner_id = match visibility == current.visibility {
        true => current.owner_id,
        false => owner(&principal, visibility)?,
    };
    let changes = NewView {
        name: name.unwrap_or(current.name),
        visibility,
        owner_id,
        filters,
        sort,
    };
    let now = state.clock.now();
    let updated = store::update(&state.db, &principal.tenant, viewer, id, changes, now).await?;
    Ok(Json(updated))
}

/// Delete a saved view
#[utoipa::path(delete, path = "/views/{id}", operation_id = "delete_view", tag = "Views",
    params(("id" = uuid::Uuid, Path, description = "View id")),
    responses((status = 200, description = "Deleted", body = Deleted)))]
async fn delete(
    State(db): State<Db>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Deleted>> {
    store::delete(&db, &principal.tenant, principal.acting_user(), id).await?;
    Ok(Json(Deleted { id, deleted: true }))
}

/// List a saved view's tickets
///
/// The ticket list (`GET /tickets`) with the view's filters and order,
/// paged as it is. A filter that no longer holds (a custom field deleted
/// since) is a 400 naming it.
#[utoipa::path(get, path = "/views/{id}/tickets", operation_id = "list_view_tickets",
    tag = "Views",
    params(("id" = uuid::Uuid, Path, description = "View id"), ListRequest),
    responses((status = 200, description = "A page of tickets", body = CursorPage<Ticket>)))]
async fn tickets(
    State(state): State<TicketReads>,
    principal: Principal,
    Id(id): Id,
    Query(request): Query<ListRequest>,
) -> ApiResult<Json<CursorPage<Ticket>>> {
    // The request's own fields first: a bad `limit` is 400 whatever the id.
    let (page, after) = request
        .check(LIST_DEFAULT, LIST_MAX)
        .map_err(ApiError::validation)?;
    let view = store::find(&state.db, &principal.tenant, principal.acting_user(), id).await?;
    let stored = Value::Object(view.filters);
    let (filter, _) = filters::check(&state, &principal, Some(&stored), view.sort).await?;
    let page = page_of(&state, &principal, "views", filter, page, after).await?;
    Ok(Json(page))
}
