//! `/tickets`: list, create, get, update, escalate, delete. Comments and
//! the timeline have their own modules; `router()` gathers them all.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::json;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::routes;

use super::model::{
    DESCRIPTION_MAX, Escalation, MEDIUM, NewTicket, PRIORITIES, REASON_MAX, STATUSES, Ticket,
    TicketFilter, TicketUpdate,
};
use super::{activities, comments, store};
use crate::auth::{Principal, Scope};
use crate::error::{ApiError, ApiResult};
use crate::extract::{Id, Json, Query};
use crate::openapi::schema::{self, Deleted};
use crate::router::ApiRouter;
use crate::state::AppState;
use crate::validate::{NAME_MAX, Page, Paged, Patch, Validator};

/// GET /tickets: default and maximum page size (docs/api.md, "Tickets").
const LIST_DEFAULT: i64 = 20;
const LIST_MAX: i64 = 100;

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::TicketsRead, routes!(list))
        .route(Scope::TicketsWrite, routes!(create))
        .route(Scope::TicketsRead, routes!(get_one))
        .route(Scope::TicketsWrite, routes!(update))
        .route(Scope::TicketsDelete, routes!(delete))
        .route(Scope::TicketsWrite, routes!(escalate))
        .merge(comments::router())
        .merge(activities::router())
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct ListQuery {
    #[param(value_type = Option<uuid::Uuid>)]
    entity_id: Option<String>,
    #[param(schema_with = schema::ticket_status)]
    status: Option<String>,
    #[param(schema_with = schema::ticket_priority)]
    priority: Option<String>,
    #[param(value_type = Option<uuid::Uuid>)]
    assigned_to_id: Option<String>,
    /// Page size, at most 100 (default 20).
    #[param(value_type = Option<i64>, minimum = 1)]
    limit: Option<String>,
    #[param(value_type = Option<i64>, minimum = 0)]
    offset: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateTicket {
    #[schema(schema_with = schema::name, required)]
    subject: Option<String>,
    #[schema(schema_with = description_schema)]
    description: Option<String>,
    /// Defaults to MEDIUM.
    #[schema(schema_with = schema::ticket_priority)]
    priority: Option<String>,
    /// An entity of the company.
    #[schema(schema_with = schema::uuid, required)]
    entity_id: Option<String>,
    /// The visitor's address: receives the ticket's emails.
    #[schema(schema_with = schema::email)]
    visitor_email: Option<String>,
}

fn description_schema() -> utoipa::openapi::ObjectBuilder {
    schema::text(DESCRIPTION_MAX)
}

fn reason_schema() -> utoipa::openapi::ObjectBuilder {
    schema::text(REASON_MAX)
}

/// Only these fields can change; anything else is a 400 rather than
/// silently ignored.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct UpdateBody {
    #[serde(default)]
    #[schema(schema_with = schema::ticket_status)]
    status: Patch<String>,
    #[serde(default)]
    #[schema(schema_with = schema::ticket_priority)]
    priority: Patch<String>,
    /// A user of the company; null unassigns.
    #[serde(default)]
    #[schema(value_type = Option<uuid::Uuid>)]
    assigned_to_id: Patch<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EscalateBody {
    /// The user who takes the ticket over.
    #[schema(schema_with = schema::uuid, required)]
    escalate_to_id: Option<String>,
    #[schema(schema_with = reason_schema)]
    reason: Option<String>,
}

/// List tickets
///
/// Newest first; filters combine. An empty filter value means no filter.
#[utoipa::path(get, path = "/tickets", operation_id = "list_tickets", tag = "Tickets",
    params(ListQuery),
    responses((status = 200, description = "A page of tickets", body = Paged<Ticket>)))]
async fn list(
    State(state): State<AppState>,
    principal: Principal,
    Query(query): Query<ListQuery>,
) -> ApiResult<Json<Paged<Ticket>>> {
    let mut v = Validator::new();
    let page = Page::parse(
        query.limit.as_deref(),
        query.offset.as_deref(),
        LIST_DEFAULT,
        LIST_MAX,
    );
    if let Err(err) = &page {
        for detail in &err.details {
            v.add(&detail.field, detail.message.clone());
        }
    }
    let filter = TicketFilter {
        entity_id: v.uuid("entityId", query.entity_id.as_deref()),
        status: v
            .one_of("status", non_empty(&query.status), STATUSES)
            .map(String::from),
        priority: v
            .one_of("priority", non_empty(&query.priority), PRIORITIES)
            .map(String::from),
        assigned_to_id: v.uuid("assignedToId", query.assigned_to_id.as_deref()),
    };
    v.finish()?;
    let page = page?;
    let (tickets, total) = store::list(&state.db, &principal.tenant, &filter, page).await?;
    Ok(Json(Paged::new(tickets, total, page)))
}

/// A query parameter given empty (`?status=`) counts as absent.
fn non_empty(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|v| !v.is_empty())
}

/// Create a ticket
///
/// Numbered `TKT-000001` per company and mode; emits `ticket.created` and
/// emails the visitor when `visitorEmail` is given.
#[utoipa::path(post, path = "/tickets", operation_id = "create_ticket", tag = "Tickets",
    request_body = CreateTicket,
    responses((status = 201, description = "Created", body = Ticket)))]
async fn create(
    State(state): State<AppState>,
    principal: Principal,
    Json(body): Json<CreateTicket>,
) -> ApiResult<(StatusCode, Json<Ticket>)> {
    let mut v = Validator::new();
    let subject = v.required("subject", body.subject.as_deref(), NAME_MAX);
    let description = v.optional("description", body.description.as_deref(), DESCRIPTION_MAX);
    let priority = v.one_of("priority", body.priority.as_deref(), PRIORITIES);
    let entity_id = v.required_uuid("entityId", body.entity_id.as_deref());
    let visitor_email = v.email("visitorEmail", body.visitor_email.as_deref());
    v.finish()?;
    let (Some(subject), Some(entity_id)) = (subject, entity_id) else {
        return Err(ApiError::internal());
    };
    let new = NewTicket {
        subject,
        description,
        priority: priority.unwrap_or(MEDIUM).to_string(),
        entity_id,
        visitor_email,
    };
    let ticket = store::create(&state.db, &principal.tenant, new).await?;
    Ok((StatusCode::CREATED, Json(ticket)))
}

/// Get a ticket
#[utoipa::path(get, path = "/tickets/{id}", operation_id = "get_ticket", tag = "Tickets",
    params(("id" = uuid::Uuid, Path, description = "Ticket id")),
    responses((status = 200, description = "The ticket", body = Ticket)))]
async fn get_one(
    State(state): State<AppState>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Ticket>> {
    Ok(Json(store::find(&state.db, &principal.tenant, id).await?))
}

/// Update a ticket
///
/// Status, priority and assignee; each real change is recorded in the
/// timeline and emitted as `ticket.updated`.
#[utoipa::path(patch, path = "/tickets/{id}", operation_id = "update_ticket", tag = "Tickets",
    request_body = UpdateBody,
    params(("id" = uuid::Uuid, Path, description = "Ticket id")),
    responses((status = 200, description = "The updated ticket", body = Ticket)))]
async fn update(
    State(state): State<AppState>,
    principal: Principal,
    Id(id): Id,
    Json(body): Json<UpdateBody>,
) -> ApiResult<Json<Ticket>> {
    let mut v = Validator::new();
    if body.status.is_missing() && body.priority.is_missing() && body.assigned_to_id.is_missing() {
        v.add(
            "body",
            "give at least one of: status, priority, assignedToId",
        );
    }
    let update = TicketUpdate {
        status: required_enum(&mut v, "status", &body.status, STATUSES),
        priority: required_enum(&mut v, "priority", &body.priority, PRIORITIES),
        assigned_to_id: match &body.assigned_to_id {
            Patch::Missing => None,
            Patch::Null => Some(None),
            Patch::Value(raw) => v.required_uuid("assignedToId", Some(raw)).map(Some),
        },
    };
    v.finish()?;
    let ticket = store::update(&state.db, &principal.tenant, id, update).await?;
    Ok(Json(ticket))
}

/// A PATCH enum field: may be absent, not null.
fn required_enum(
    v: &mut Validator,
    field: &str,
    value: &Patch<String>,
    allowed: &[&str],
) -> Option<String> {
    match value {
        Patch::Missing => None,
        Patch::Null => {
            v.add(field, "must not be null");
            None
        }
        Patch::Value(raw) => v.one_of(field, Some(raw), allowed).map(String::from),
    }
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
    State(state): State<AppState>,
    principal: Principal,
    Id(id): Id,
    Json(body): Json<EscalateBody>,
) -> ApiResult<Json<Ticket>> {
    let mut v = Validator::new();
    let to_user = v.required_uuid("escalateToId", body.escalate_to_id.as_deref());
    let reason = v.optional("reason", body.reason.as_deref(), REASON_MAX);
    v.finish()?;
    let Some(to_user) = to_user else {
        return Err(ApiError::internal());
    };
    let escalation = Escalation {
        to_user,
        reason,
        automatic: false,
        rule_id: None,
    };
    let ticket = store::escalate(&state.db, &principal.tenant, id, escalation).await?;
    Ok(Json(ticket))
}

/// Delete a ticket
#[utoipa::path(delete, path = "/tickets/{id}", operation_id = "delete_ticket", tag = "Tickets",
    params(("id" = uuid::Uuid, Path, description = "Ticket id")),
    responses((status = 200, description = "Deleted", body = Deleted)))]
async fn delete(
    State(state): State<AppState>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<serde_json::Value>> {
    store::delete(&state.db, &principal.tenant, id).await?;
    Ok(Json(json!({ "id": id, "deleted": true })))
}
