//! `/tickets/{id}/escalate` and `/tickets/{id}/tags`: the changes of a
//! ticket that have a route of their own.

use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::routes;

use super::model::{Escalation, REASON_MAX, Ticket};
use super::store;
use crate::auth::{Principal, Scope};
use crate::error::ApiResult;
use crate::extract::{Id, Json};
use crate::idempotency::RequestState;
use crate::openapi::schema;
use crate::router::ApiRouter;
use crate::tags::routes::{TagEditBody, tag_edit};
use crate::validate::{Fields, optional_text, required_id};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::TicketsWrite, routes!(escalate))
        .route(Scope::TicketsWrite, routes!(edit_tags))
}

fn reason_schema() -> utoipa::openapi::ObjectBuilder {
    schema::text(REASON_MAX)
}

#[derive(Deserialize, ToSchema)]
#[schema(as = EscalateTicket)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EscalateBody {
    /// The user who takes the ticket over.
    #[schema(schema_with = schema::uuid, required)]
    escalate_to_id: Option<String>,
    #[schema(schema_with = reason_schema)]
    reason: Option<String>,
}

/// Escalate a ticket
///
/// Assigns it to `escalateToId`, raises the priority, emits
/// `ticket.escalated`.
#[utoipa::path(post, path = "/tickets/{id}/escalate", operation_id = "escalate_ticket",
    tag = "Tickets",
    request_body = EscalateBody,
    params(("id" = uuid::Uuid, Path, description = "Ticket id")),
    responses((status = 200, description = "The escalated ticket", body = Ticket)))]
async fn escalate(
    RequestState(state): RequestState,
    principal: Principal,
    Id(id): Id,
    Json(body): Json<EscalateBody>,
) -> ApiResult<Json<Ticket>> {
    let (to_user, reason) = (
        required_id("escalateToId", body.escalate_to_id.as_deref()),
        optional_text("reason", body.reason.as_deref(), REASON_MAX),
    )
        .all_valid()?;
    let escalation = Escalation {
        to_user: Some(to_user),
        to_team: None,
        reason,
        automatic: false,
        rule_id: None,
    };
    let ticket = store::escalate(
        &state.db.acting(principal.actor()),
        &principal.tenant,
        id,
        escalation,
        state.clock.now(),
        &state.link_signer(),
    )
    .await?;
    Ok(Json(ticket))
}

/// Add and remove tags
///
/// One atomic change: concurrent calls each keep their own tags. More than
/// 50 tags afterwards is a 400 that changes nothing. A real change is
/// recorded in the timeline and emitted as `ticket.updated` with
/// `changes.tags {added, removed}`.
#[utoipa::path(post, path = "/tickets/{id}/tags", operation_id = "edit_ticket_tags",
    tag = "Tickets",
    request_body = TagEditBody,
    params(("id" = uuid::Uuid, Path, description = "Ticket id")),
    responses((status = 200, description = "The ticket with its tags", body = Ticket)))]
async fn edit_tags(
    RequestState(state): RequestState,
    principal: Principal,
    Id(id): Id,
    Json(body): Json<TagEditBody>,
) -> ApiResult<Json<Ticket>> {
    let edit = tag_edit(&body)?;
    let ticket = store::edit_tags(
        &state.db.acting(principal.actor()),
        &principal.tenant,
        id,
        edit,
        state.clock.now(),
        &state.link_signer(),
    )
    .await?;
    Ok(Json(ticket))
}
