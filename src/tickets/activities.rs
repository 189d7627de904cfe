//! `/tickets/{id}/activities`: the ticket's timeline, oldest first.

use axum::extract::State;
use utoipa_axum::routes;

use super::model::Activity;
use super::store;
use crate::auth::{Principal, Scope};
use crate::error::ApiResult;
use crate::extract::{Id, Json, Query};
use crate::router::ApiRouter;
use crate::state::AppState;
use crate::validate::{Page, PageQuery, Paged};

const LIST_DEFAULT: i64 = 50;
const LIST_MAX: i64 = 100;

pub fn router() -> ApiRouter {
    ApiRouter::new().route(Scope::TicketsRead, routes!(list))
}

/// A ticket's timeline
///
/// Oldest first: creation, changes, escalations, comments.
#[utoipa::path(get, path = "/tickets/{id}/activities", operation_id = "list_activities",
    tag = "Tickets",
    params(("id" = uuid::Uuid, Path, description = "Ticket id"), PageQuery),
    responses((status = 200, description = "A page of timeline entries", body = Paged<Activity>)))]
async fn list(
    State(state): State<AppState>,
    principal: Principal,
    Id(ticket_id): Id,
    Query(query): Query<PageQuery>,
) -> ApiResult<Json<Paged<Activity>>> {
    let page = Page::from_query(&query, LIST_DEFAULT, LIST_MAX)?;
    let (activities, total) =
        store::list_activities(&state.db, &principal.tenant, ticket_id, page).await?;
    Ok(Json(Paged::new(activities, total, page)))
}
