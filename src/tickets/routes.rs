//! `/tickets`: list, create, get, update, escalate, delete. Comments and
//! the timeline have their own modules; `router()` gathers them all.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::json;
use utoipa::ToSchema;
use utoipa_axum::routes;

use super::model::{
    DESCRIPTION_MAX, Escalation, NewTicket, Priority, REASON_MAX, Ticket, TicketStatus,
    TicketUpdate,
};
use super::{activities, comments, listing, store};
use crate::attachments::model::attachment_ids;
use crate::auth::{Principal, Scope};
use crate::custom_fields::model::{RecordKind, check_values};
use crate::error::{ApiResult, FieldError};
use crate::extract::{Id, Json};
use crate::idempotency::RequestState;
use crate::openapi::schema::{self, Deleted};
use crate::router::ApiRouter;
use crate::sequences::contacts::Matcher;
use crate::state::AppState;
use crate::tags::model::{optional_tag_set, tag_set};
use crate::tags::routes::{TagEditBody, tag_edit};
use crate::teams::routing;
use crate::validate::{
    Fields, NAME_MAX, Patch, ensure, optional_email, optional_enum, optional_id, optional_text,
    problem, required_id, required_text,
};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::TicketsRead, routes!(listing::list))
        .route(Scope::TicketsWrite, routes!(create))
        .route(Scope::TicketsRead, routes!(get_one))
        .route(Scope::TicketsWrite, routes!(update))
        .route(Scope::TicketsDelete, routes!(delete))
        .route(Scope::TicketsWrite, routes!(escalate))
        .route(Scope::TicketsWrite, routes!(edit_tags))
        .merge(comments::router())
        .merge(activities::router())
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
    /// A team of the company (in the key's mode). When its routing takes
    /// tickets, an online member below capacity is assigned at once.
    #[schema(value_type = Option<uuid::Uuid>)]
    team_id: Option<String>,
    /// A chat session of the company and mode the ticket is made from: the
    /// ticket's `visitor` is the chat's, and without `visitorEmail` the
    /// chat's email (if proven) receives the ticket's emails.
    #[schema(schema_with = schema::uuid)]
    chat_session_id: Option<String>,
    /// Tags: trimmed and lower-cased, 1-50 letters, digits, `-`, `_`, `:`
    /// or `.` each, at most 50; duplicates collapse.
    #[schema(value_type = Option<Vec<String>>)]
    tags: Option<serde_json::Value>,
    /// Values of custom fields applying to tickets, by key; each required
    /// one must be given.
    #[schema(value_type = Option<Object>)]
    custom_fields: Option<serde_json::Value>,
    /// Up to 10 unattached uploads of the company and mode (`POST
    /// /attachments`) to attach.
    #[schema(value_type = Option<Vec<uuid::Uuid>>)]
    attachment_ids: Option<serde_json::Value>,
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
#[schema(as = UpdateTicket)]
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
    /// A team of the company; null takes the ticket out of its team. An
    /// unassigned ticket moved into a team that routes tickets is assigned
    /// to an online member below capacity.
    #[serde(default)]
    #[schema(value_type = Option<uuid::Uuid>)]
    team_id: Patch<String>,
    /// Replaces the ticket's tags (normalised as on create).
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    tags: Patch<serde_json::Value>,
    /// Sets the values it names (null clears one) and keeps the others.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    custom_fields: Patch<serde_json::Value>,
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

/// Create a ticket
///
/// Numbered `TKT-000001` per company and mode; emits `ticket.created` and
/// emails the visitor when `visitorEmail` is given.
#[utoipa::path(post, path = "/tickets", operation_id = "create_ticket", tag = "Tickets",
    request_body = CreateTicket,
    responses((status = 201, description = "Created", body = Ticket)))]
async fn create(
    RequestState(state): RequestState,
    principal: Principal,
    Json(body): Json<CreateTicket>,
) -> ApiResult<(StatusCode, Json<Ticket>)> {
    let definitions =
        crate::custom_fields::definitions(&state.field_definitions, &state.db, &principal.tenant)
            .await?;
    let (
        subject,
        description,
        priority,
        entity_id,
        visitor_email,
        team_id,
        chat,
        tags,
        custom_fields,
        files,
    ) = (
        required_text("subject", body.subject.as_deref(), NAME_MAX),
        optional_text("description", body.description.as_deref(), DESCRIPTION_MAX),
        optional_enum("priority", body.priority.as_deref()),
        required_id("entityId", body.entity_id.as_deref()),
        optional_email("visitorEmail", body.visitor_email.as_deref()),
        optional_id("teamId", body.team_id.as_deref()),
        optional_id("chatSessionId", body.chat_session_id.as_deref()),
        optional_tag_set("tags", body.tags.as_ref()),
        check_values(
            &definitions,
            RecordKind::Ticket,
            body.custom_fields.as_ref(),
            true,
            false,
        ),
        attachment_ids("attachmentIds", body.attachment_ids.as_ref()),
    )
        .all_valid()?;
    let new = NewTicket {
        subject,
        description,
        priority: priority.unwrap_or(Priority::Medium),
        entity_id,
        visitor_email,
        team_id,
        chat_session_id: chat,
        tags,
        custom_fields,
        attachment_ids: files,
    };
    let now = state.clock.now();
    let contacts = Matcher {
        tenant: &principal.tenant,
        now,
    };
    let ticket = store::create(
        &state.db.acting(principal.actor()),
        &state.sla,
        &state.ticket_subscribers,
        &principal.tenant,
        new,
        now,
        &state.link_signer(),
        &contacts,
    )
    .await?;
    let ticket =
        routing::route_ticket(&routing::Routing::from(&state), &principal.tenant, ticket).await;
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
    Ok(Json(
        store::find(&state.db, &principal.tenant, id, &state.link_signer()).await?,
    ))
}

/// Update a ticket
///
/// Status, priority, assignee, team and tags (`tags` replaces the set); each real
/// change is recorded in the timeline and emitted as `ticket.updated`.
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
    let nothing_given = body.status.is_missing()
        && body.priority.is_missing()
        && body.assigned_to_id.is_missing()
        && body.team_id.is_missing()
        && body.tags.is_missing()
        && body.custom_fields.is_missing();
    let definitions = match &body.custom_fields {
        Patch::Value(_) => {
            crate::custom_fields::definitions(
                &state.field_definitions,
                &state.db,
                &principal.tenant,
            )
            .await?
        }
        Patch::Missing | Patch::Null => Default::default(),
    };
    let (_, status, priority, assigned_to_id, team_id, tags, custom_fields) = (
        ensure(
            !nothing_given,
            "body",
            "give at least one of: status, priority, assignedToId, teamId, tags, customFields",
        ),
        patched_enum("status", &body.status),
        patched_enum("priority", &body.priority),
        patched_id("assignedToId", &body.assigned_to_id),
        patched_id("teamId", &body.team_id),
        match &body.tags {
            Patch::Missing => Ok(None),
            Patch::Null => Err(problem("tags", "must not be null")),
            Patch::Value(raw) => tag_set("tags", raw).map(Some),
        },
        match &body.custom_fields {
            Patch::Missing => Ok(Default::default()),
            Patch::Null => Err(vec![problem("customFields", "must not be null")]),
            Patch::Value(raw) => {
                check_values(&definitions, RecordKind::Ticket, Some(raw), false, false)
            }
        },
    )
        .all_valid()?;
    let update = TicketUpdate {
        status,
        priority,
        assigned_to_id,
        team_id,
        tags,
        custom_fields,
    };
    let moved_into_team = matches!(update.team_id, Some(Some(_)));
    // Signed before the change: the store adds it to the resolution email
    // only if the ticket becomes RESOLVED in an entity asking automatically.
    let rating_link = match status {
        Some(TicketStatus::Resolved) => {
            let now = state.clock.now();
            Some(crate::csat::notify::ticket_link(&state.db, &state.public_url, now, id).await?)
        }
        _ => None,
    };
    let ticket = store::update_with_rating_link(
        &state.db.acting(principal.actor()),
        &principal.tenant,
        id,
        update,
        rating_link.as_deref(),
        state.clock.now(),
        &state.link_signer(),
    )
    .await?;
    let ticket = if moved_into_team {
        routing::route_ticket(&routing::Routing::from(&state), &principal.tenant, ticket).await
    } else {
        ticket
    };
    Ok(Json(ticket))
}

/// A PATCH id field: absent keeps, null clears, a value must be an id.
fn patched_id(
    field: &str,
    value: &Patch<String>,
) -> Result<Option<Option<uuid::Uuid>>, FieldError> {
    match value {
        Patch::Missing => Ok(None),
        Patch::Null => Ok(Some(None)),
        Patch::Value(raw) => required_id(field, Some(raw)).map(|id| Some(Some(id))),
    }
}

/// A PATCH enum field: may be absent, not null.
fn patched_enum<E>(field: &str, value: &Patch<String>) -> Result<Option<E>, FieldError>
where
    E: std::str::FromStr<Err = crate::domain::UnknownValue>,
{
    match value {
        Patch::Missing => Ok(None),
        Patch::Null => Err(problem(field, "must not be null")),
        Patch::Value(raw) => optional_enum(field, Some(raw)),
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

/// Delete a ticket
#[utoipa::path(delete, path = "/tickets/{id}", operation_id = "delete_ticket", tag = "Tickets",
    params(("id" = uuid::Uuid, Path, description = "Ticket id")),
    responses((status = 200, description = "Deleted", body = Deleted)))]
async fn delete(
    State(state): State<AppState>,
    principal: Principal,
    requested: crate::extract::Requested,
    Id(id): Id,
) -> ApiResult<Json<serde_json::Value>> {
    let db = principal.acting(&state.db, requested);
    let hashes = store::delete(&db, &principal.tenant, id, state.clock.now()).await?;
    // The ticket's files go now, not at the next sweep; shared bytes stay.
    crate::attachments::sweep::release(
        &state.db,
        &state.attachments.storage,
        principal.tenant.company_id,
        &hashes,
    )
    .await;
    Ok(Json(json!({ "id": id, "deleted": true })))
}
