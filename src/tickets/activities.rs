//! `/tickets/{id}/activities`: the ticket's timeline, oldest first.

use std::sync::Arc;

use axum::extract::State;
use utoipa_axum::routes;

use super::model::Activity;
use super::nested::ticket_page;
use super::store;
use crate::auth::{Principal, Scope};
use crate::db::Db;
use crate::error::ApiResult;
use crate::extract::{Id, Json, Query};
use crate::paging::{After, CursorPage, Cursors, ListRequest};
use crate::router::ApiRouter;

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
    State(db): State<Db>,
    State(cursors): State<Arc<Cursors>>,
    principal: Principal,
    Id(ticket_id): Id,
    Query(query): Query<ListRequest>,
) -> ApiResult<Json<CursorPage<Activity>>> {
    let (db, principal) = (&db, &principal);
    let read = |page, after: Option<After>| async move {
        store::list_activities(db, &principal.tenant, ticket_id, page, after.as_ref()).await
    };
    let position = |row: &Activity| After {
        created_at: row.created_at,
        id: row.id,
    };
    ticket_page(
        &cursors,
        principal,
        "ticket_activities",
        ticket_id,
        &query,
        read,
        position,
    )
    .await
}
