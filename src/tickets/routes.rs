//! `/tickets`: list, create, get, update, escalate, delete. Comments and
//! the timeline have their own modules; `router()` gathers them all.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::json;
use utoipa::ToSchema;
use utoipa_axum::routes;

use super::model::{DESCRIPTION_MAX, NewTicket, Priority, Ticket, TicketChannel};
use super::versions::Versioned;
use super::{
    actions, activities, bulk, comments, listing, mentions, related, sending, store, update,
};
use crate::attachments::Attachments;
use crate::attachments::links::Signer;
use crate::attachments::model::attachment_ids;
use crate::auth::{Principal, Scope};
use crate::custom_fields::model::{RecordKind, check_values};
use crate::db::Db;
use crate::error::ApiResult;
use crate::extract::{Id, Json};
use crate::idempotency::RequestState;
use crate::openapi::schema::{self, Deleted};
use crate::router::ApiRouter;
use crate::sequences::contacts::Matcher;
use crate::tags::model::optional_tag_set;
use crate::teams::routing;
use crate::time::Clock;
use crate::validate::{
    Fields, NAME_MAX, optional_email, optional_enum, optional_id, optional_text, required_id,
    required_text,
};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::TicketsRead, routes!(listing::list))
        .route(Scope::TicketsWrite, routes!(create))
        .route(Scope::TicketsRead, routes!(get_one))
        .route(Scope::TicketsWrite, routes!(update::update))
        .route(Scope::TicketsDelete, routes!(delete))
        .merge(actions::router())
        .merge(bulk::router())
        .merge(super::macros::router())
        .merge(comments::router())
        .merge(related::router())
        .merge(activities::router())
        .merge(mentions::router())
        .merge(sending::router())
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
        // Made by the API, from a chat when it names one.
        channel: match chat {
            Some(_) => TicketChannel::Chat,
            None => TicketChannel::Api,
        },
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
        // What the knowledge base suggests for it is kept for its agent
        // by a job the create queues.
        (
            &contacts,
            Some(&crate::sequences::ticket_suggestions::Suggestions),
        ),
    )
    .await?;
    let ticket =
        routing::route_ticket(&routing::Routing::from(&state), &principal.tenant, ticket).await;
    Ok((StatusCode::CREATED, Json(ticket)))
}

/// Get a ticket
///
/// `ETag` is the ticket's version, for `If-Match` on a later write.
#[utoipa::path(get, path = "/tickets/{id}", operation_id = "get_ticket", tag = "Tickets",
    params(("id" = uuid::Uuid, Path, description = "Ticket id")),
    responses((status = 200, description = "The ticket", body = Ticket,
        headers(("ETag" = String, description = "The ticket's version, `\"<version>\"`: send it back as `If-Match`.")))))]
async fn get_one(
    State(db): State<Db>,
    State(signer): State<Signer>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Versioned<Ticket>> {
    let ticket = store::find(&db, &principal.tenant, id, &signer).await?;
    Ok(Versioned(ticket.version, ticket))
}

/// Delete a ticket
#[utoipa::path(delete, path = "/tickets/{id}", operation_id = "delete_ticket", tag = "Tickets",
    params(("id" = uuid::Uuid, Path, description = "Ticket id")),
    responses((status = 200, description = "Deleted", body = Deleted)))]
async fn delete(
    State(db): State<Db>,
    State(clock): State<Clock>,
    State(attachments): State<Arc<Attachments>>,
    principal: Principal,
    requested: crate::extract::Requested,
    Id(id): Id,
) -> ApiResult<Json<serde_json::Value>> {
    let db = principal.acting(&db, requested);
    let hashes = store::delete(&db, &principal.tenant, id, clock.now()).await?;
    // The ticket's files go now, not at the next sweep; shared bytes stay.
    crate::attachments::sweep::release(
        &db,
        &attachments.storage,
        principal.tenant.company_id,
        &hashes,
    )
    .await;
    Ok(Json(json!({ "id": id, "deleted": true })))
}
