//! `/tickets/{id}/links` and `/tickets/{id}/merge`: linking tickets of a
//! company, merging one into another (collision-safe with `If-Match`, as
//! the other ticket writes) and undoing that.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::routes;

use super::model::{NewTicket, Ticket};
use super::relations::{NewLinkKind, TicketLink};
use super::store;
use super::versions::{IfMatch, VersionConflict, refused};
use crate::attachments::links::Signer;
use crate::auth::{Principal, Scope};
use crate::db::Db;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Id, Ids, Json};
use crate::idempotency::RequestState;
use crate::openapi::schema::{self, DataList, Deleted, ErrorBody};
use crate::router::ApiRouter;
use crate::time::Clock;
use crate::validate::{Fields, NAME_MAX, optional_text, required_enum, required_id};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::TicketsRead, routes!(list_links))
        .route(Scope::TicketsWrite, routes!(add_link))
        .route(Scope::TicketsWrite, routes!(remove_link))
        .route(Scope::TicketsWrite, routes!(merge))
        .route(Scope::TicketsWrite, routes!(undo_merge))
        .route(Scope::TicketsWrite, routes!(split))
}

#[derive(Deserialize, ToSchema)]
#[schema(as = NewTicketLink)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct LinkBody {
    /// Another ticket of the company and mode.
    #[schema(schema_with = schema::uuid, required)]
    ticket_id: Option<String>,
    /// What that ticket is to this one: `related`, `duplicate_of` (this
    /// one duplicates it), `parent_of` (this one is its parent) or
    /// `child_of`.
    #[schema(schema_with = link_kind_schema, required)]
    kind: Option<String>,
}

fn link_kind_schema() -> utoipa::openapi::ObjectBuilder {
    schema::enum_of(NewLinkKind::NAMES)
}

#[derive(Deserialize, ToSchema)]
#[schema(as = MergeTicket)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct MergeBody {
    /// The ticket (of the company and mode, not merged itself) that takes
    /// this one's conversation.
    #[schema(schema_with = schema::uuid, required)]
    into: Option<String>,
}

/// List a ticket's links
///
/// Each link as this ticket sees it (the other ticket sees the inverse
/// kind), oldest first.
#[utoipa::path(get, path = "/tickets/{id}/links", operation_id = "list_ticket_links",
    tag = "Tickets",
    params(("id" = uuid::Uuid, Path, description = "Ticket id")),
    responses((status = 200, description = "The links", body = DataList<TicketLink>)))]
async fn list_links(
    State(db): State<Db>,
    State(signer): State<Signer>,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<DataList<TicketLink>>> {
    let ticket = store::find(&db, &principal.tenant, id, &signer).await?;
    Ok(Json(DataList { data: ticket.links }))
}

/// Link two tickets
///
/// One link joins a pair (a second one is a 409); both tickets show it and
/// get a timeline entry, and each emits `ticket.linked`.
#[utoipa::path(post, path = "/tickets/{id}/links", operation_id = "add_ticket_link",
    tag = "Tickets",
    request_body = LinkBody,
    params(("id" = uuid::Uuid, Path, description = "Ticket id")),
    responses(
        (status = 201, description = "The link as this ticket sees it", body = TicketLink),
        (status = 409, description = "`conflict`: the tickets are already linked",
            body = ErrorBody),
    ))]
async fn add_link(
    RequestState(state): RequestState,
    principal: Principal,
    Id(id): Id,
    Json(body): Json<LinkBody>,
) -> ApiResult<(StatusCode, Json<TicketLink>)> {
    let (other, kind) = (
        required_id("ticketId", body.ticket_id.as_deref()),
        required_enum::<NewLinkKind>("kind", body.kind.as_deref()),
    )
        .all_valid()?;
    if other == id {
        return Err(ApiError::invalid_field(
            "ticketId",
            "a ticket cannot be linked to itself",
        ));
    }
    let link = store::add_link(
        &state.db.acting(principal.actor()),
        &principal.tenant,
        id,
        other,
        kind,
        state.clock.now(),
        &state.link_signer(),
    )
    .await?;
    Ok((StatusCode::CREATED, Json(link)))
}

/// Unlink two tickets
///
/// Removes the link made between them (of either side), or declines a
/// suggested merge (case grouping); each ticket emits `ticket.linked`
/// with `added: false`. Links a merge or a split made stay.
#[utoipa::path(delete, path = "/tickets/{id}/links/{ticketId}",
    operation_id = "remove_ticket_link", tag = "Tickets",
    params(
        ("id" = uuid::Uuid, Path, description = "Ticket id"),
        ("ticketId" = uuid::Uuid, Path, description = "The linked ticket's id"),
    ),
    responses((status = 200, description = "Removed", body = Deleted)))]
async fn remove_link(
    State(db): State<Db>,
    State(clock): State<Clock>,
    State(signer): State<Signer>,
    principal: Principal,
    Ids(id, other): Ids,
) -> ApiResult<Json<Deleted>> {
    store::remove_link(
        &db.acting(principal.actor()),
        &principal.tenant,
        id,
        other,
        clock.now(),
        &signer,
    )
    .await?;
    Ok(Json(Deleted {
        id: other,
        deleted: true,
    }))
}

/// Merge a ticket into another
///
/// Moves this ticket's comments, its own attachments and its tags into
/// `into`, closes it with `mergedInto` and a link both ways, and emits
/// `ticket.merged`. Later comments on it are refused (409
/// `ticket_merged`). Undo within the window with `POST
/// /tickets/{id}/merge/undo`. With `If-Match` on a version this ticket is
/// no longer at, nothing changes: 412 `version_conflict` with the changes
/// since.
#[utoipa::path(post, path = "/tickets/{id}/merge", operation_id = "merge_ticket",
    tag = "Tickets",
    request_body = MergeBody,
    params(("id" = uuid::Uuid, Path, description = "Ticket id (the one merged away)"),
        ("If-Match" = Option<String>, Header, description = "This ticket's version the merge is based on (its `ETag`, `\"<version>\"`): when the ticket is at another version now, nothing changes and the answer is 412 `version_conflict`. `*` or no header: any version.")),
    responses(
        (status = 200, description = "The merged ticket, closed", body = Ticket),
        (status = 409, description = "`ticket_merged`: this ticket or the target is already \
            merged (`mergedInto` names where)", body = ErrorBody),
        (status = 412, description = "`version_conflict`: this ticket is no longer at the version `If-Match` named; nothing changed. `details` has a line per change since, `changes` the timeline entries, `currentVersion` the version now.", body = VersionConflict),
    ))]
async fn merge(
    RequestState(state): RequestState,
    principal: Principal,
    Id(id): Id,
    IfMatch(expected): IfMatch,
    Json(body): Json<MergeBody>,
) -> ApiResult<Json<Ticket>> {
    let into =
        required_id("into", body.into.as_deref()).map_err(|e| ApiError::validation(vec![e]))?;
    if into == id {
        return Err(ApiError::invalid_field(
            "into",
            "a ticket cannot be merged into itself",
        ));
    }
    let merged = store::merge(
        &state.db.acting(principal.actor()),
        &principal.tenant,
        id,
        into,
        expected,
        state.clock.now(),
        &state.link_signer(),
    )
    .await;
    match merged {
        Ok(ticket) => Ok(Json(ticket)),
        Err(error) => Err(refused(&state.db, &principal.tenant, id, expected, error).await),
    }
}

/// Undo a merge
///
/// Within the undo window (an hour unless configured otherwise) of the
/// ticket's merge: its comments, attachments and status come back, the
/// tags it gave the target go, and the merge's link is removed; emits
/// `ticket.merged` with `undone: true`.
#[utoipa::path(post, path = "/tickets/{id}/merge/undo", operation_id = "undo_ticket_merge",
    tag = "Tickets",
    params(("id" = uuid::Uuid, Path, description = "Ticket id (the one merged away)")),
    responses(
        (status = 200, description = "The ticket, restored", body = Ticket),
        (status = 409, description = "`conflict`: the ticket is not merged; `undo_expired`: \
            the window has passed", body = ErrorBody),
    ))]
async fn undo_merge(
    RequestState(state): RequestState,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<Ticket>> {
    let window =
        chrono::TimeDelta::from_std(state.config.merge_undo).unwrap_or(chrono::TimeDelta::MAX);
    let ticket = store::undo_merge(
        &state.db.acting(principal.actor()),
        &principal.tenant,
        id,
        window,
        state.clock.now(),
        &state.link_signer(),
    )
    .await?;
    Ok(Json(ticket))
}

#[derive(Deserialize, ToSchema)]
#[schema(as = SplitTicket)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SplitBody {
    /// A comment of this ticket: it moves to the new ticket.
    #[schema(schema_with = schema::uuid, required)]
    comment_id: Option<String>,
    /// Also move every comment after it (default false).
    following: Option<bool>,
    /// The new ticket's subject (default `Split from TKT-…: ` and this
    /// ticket's subject, cut to 255 characters); blank counts as absent.
    #[schema(schema_with = subject_schema)]
    subject: Option<String>,
}

fn subject_schema() -> utoipa::openapi::ObjectBuilder {
    schema::text(NAME_MAX)
}

/// Split a ticket
///
/// Makes a new ticket (same entity, priority, team, tags and visitor email;
/// `ticket.created`) and moves the comment (and, with `following`, those
/// after it) there, linked to this ticket (`split_from` on the new one,
/// `split_into` here); emits `ticket.split`.
#[utoipa::path(post, path = "/tickets/{id}/split", operation_id = "split_ticket",
    tag = "Tickets",
    request_body = SplitBody,
    params(("id" = uuid::Uuid, Path, description = "Ticket id")),
    responses(
        (status = 201, description = "The new ticket", body = Ticket),
        (status = 409, description = "`ticket_merged`: the ticket was merged into another",
            body = ErrorBody),
    ))]
async fn split(
    RequestState(state): RequestState,
    principal: Principal,
    Id(id): Id,
    Json(body): Json<SplitBody>,
) -> ApiResult<(StatusCode, Json<Ticket>)> {
    let (comment, subject) = (
        required_id("commentId", body.comment_id.as_deref()),
        optional_text("subject", body.subject.as_deref(), NAME_MAX),
    )
        .all_valid()?;
    let db = state.db.acting(principal.actor());
    let (tenant, signer) = (&principal.tenant, state.link_signer());
    store::comment_to_split(&db, tenant, id, comment).await?;
    let old = store::find(&db, tenant, id, &signer).await?;
    let subject = subject.unwrap_or_else(|| {
        let named = format!("Split from {}: {}", old.ticket_number, old.subject);
        named.chars().take(NAME_MAX).collect()
    });
    let new = NewTicket {
        subject,
        description: None,
        priority: old.priority,
        entity_id: old.entity_id,
        visitor_email: old.visitor_email.clone(),
        // The conversation split off goes on where it came from.
        channel: old.channel,
        team_id: old.team_id,
        chat_session_id: None,
        tags: old.tags.clone(),
        custom_fields: Default::default(),
        attachment_ids: Vec::new(),
    };
    let now = state.clock.now();
    let subscribers = &state.ticket_subscribers;
    // The new ticket has the old one's requester, so it finds their contact.
    let contacts = crate::sequences::contacts::Matcher { tenant, now };
    let made = store::create(
        &db,
        &state.sla,
        subscribers,
        tenant,
        new,
        now,
        &signer,
        (&contacts, None),
    )
    .await?;
    let following = body.following.unwrap_or(false);
    let ticket = store::split(&db, tenant, id, made.id, comment, following, now, &signer).await?;
    Ok((StatusCode::CREATED, Json(ticket)))
}
