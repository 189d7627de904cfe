//! `/tickets/{id}/activities`: the ticket's timeline, oldest first.

use axum::extract::State;
use utoipa_axum::routes;

use super::model::Activity;
use super::store;
use crate::auth::{Principal, Scope};
use crate::error::{ApiError, ApiResult};
use crate::extract::{Id, Json, Query};
use crate::paging::{After, CursorPage, ListId, ListRequest, Total};
use crate::router::ApiRouter;
use crate::state::AppState;

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
    params(("id" = uuid::Uuid, Path, description = "Ticket id"), ListRequest),
    responses((status = 200, description = "A page of timeline entries", body = CursorPage<Activity>)))]
async fn list(
    State(state): State<AppState>,
    principal: Principal,
    Id(ticket_id): Id,
    Query(query): Query<ListRequest>,
) -> ApiResult<Json<CursorPage<Activity>>> {
    let (page, after) = query
        .check(LIST_DEFAULT, LIST_MAX)
        .map_err(ApiError::validation)?;
    let list = ListId::new("ticket_activities", &principal.tenant, &ticket_id);
    let after = state.cursors.open_after(&list, after.as_deref())?;
    let (activities, total) = store::list_activities(
        &state.db,
        &principal.tenant,
        ticket_id,
        page,
        after.as_ref(),
    )
    .await?;
    let position = |row: &Activity| After {
        created_at: row.created_at,
        id: row.id,
    };
    Ok(Json(CursorPage::by_time(
        activities,
        Total::exact(total),
        page,
        &state.cursors,
        &list,
        position,
    )))
}
