//! `/tickets/{id}/activities`: the ticket's timeline, oldest first.

use axum::extract::State;
use utoipa_axum::routes;

use super::model::Activity;
use super::nested::ticket_page;
use super::store;
use crate::auth::{Principal, Scope};
use crate::error::ApiResult;
use crate::extract::{Id, Json, Query};
use crate::paging::{After, CursorPage, ListRequest};
use crate::router::ApiRouter;
use crate::state::AppState;

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
    let (state, principal) = (&state, &principal);
    let read = |page, after: Option<After>| async move {
        store::list_activities(
            &state.db,
            &principal.tenant,
            ticket_id,
            page,
            after.as_ref(),
        )
        .await
    };
    let position = |row: &Activity| After {
        created_at: row.created_at,
        id: row.id,
    };
    ticket_page(
        state,
        principal,
        "ticket_activities",
        ticket_id,
        &query,
        read,
        position,
    )
    .await
}
