//! Operations of tickets, comments and the timeline.
#![allow(dead_code)]

use utoipa::OpenApi;

use super::schema::Deleted;
use crate::tickets::comments::CreateComment;
use crate::tickets::model::{Activity, Comment, Ticket};
use crate::tickets::routes::{CreateTicket, EscalateBody, ListQuery, UpdateBody};
use crate::validate::{PageQuery, Paged};

#[derive(OpenApi)]
#[openapi(paths(
    list_tickets,
    create_ticket,
    get_ticket,
    update_ticket,
    delete_ticket,
    escalate_ticket,
    list_comments,
    create_comment,
    list_activities,
))]
pub struct Doc;

/// List tickets
///
/// Newest first; filters combine. An empty filter value means no filter.
#[utoipa::path(get, path = "/api/v1/tickets", tag = "Tickets", params(ListQuery),
    responses((status = 200, description = "A page of tickets", body = Paged<Ticket>)))]
fn list_tickets() {}

/// Create a ticket
///
/// Numbered `TKT-000001` per company and mode; emits `ticket.created` and
/// emails the visitor when `visitorEmail` is given.
#[utoipa::path(post, path = "/api/v1/tickets", tag = "Tickets", request_body = CreateTicket,
    responses((status = 201, description = "Created", body = Ticket)))]
fn create_ticket() {}

/// Get a ticket
#[utoipa::path(get, path = "/api/v1/tickets/{id}", tag = "Tickets",
    params(("id" = uuid::Uuid, Path, description = "Ticket id")),
    responses((status = 200, description = "The ticket", body = Ticket)))]
fn get_ticket() {}

/// Update a ticket
///
/// Status, priority and assignee; each real change is recorded in the
/// timeline and emitted as `ticket.updated`.
#[utoipa::path(patch, path = "/api/v1/tickets/{id}", tag = "Tickets", request_body = UpdateBody,
    params(("id" = uuid::Uuid, Path, description = "Ticket id")),
    responses((status = 200, description = "The updated ticket", body = Ticket)))]
fn update_ticket() {}

/// Delete a ticket
#[utoipa::path(delete, path = "/api/v1/tickets/{id}", tag = "Tickets",
    params(("id" = uuid::Uuid, Path, description = "Ticket id")),
    responses((status = 200, description = "Deleted", body = Deleted)))]
fn delete_ticket() {}

/// Escalate a ticket
///
/// Assigns it to `escalateToId`, raises the priority, emits
/// `ticket.escalated`.
#[utoipa::path(post, path = "/api/v1/tickets/{id}/escalate", tag = "Tickets",
    request_body = EscalateBody,
    params(("id" = uuid::Uuid, Path, description = "Ticket id")),
    responses((status = 200, description = "The escalated ticket", body = Ticket)))]
fn escalate_ticket() {}

/// List a ticket's comments
#[utoipa::path(get, path = "/api/v1/tickets/{id}/comments", tag = "Tickets",
    params(("id" = uuid::Uuid, Path, description = "Ticket id"), PageQuery),
    responses((status = 200, description = "A page of comments", body = Paged<Comment>)))]
fn list_comments() {}

/// Comment on a ticket
///
/// Emits `comment.created`.
#[utoipa::path(post, path = "/api/v1/tickets/{id}/comments", tag = "Tickets",
    request_body = CreateComment,
    params(("id" = uuid::Uuid, Path, description = "Ticket id")),
    responses((status = 201, description = "Created", body = Comment)))]
fn create_comment() {}

/// A ticket's timeline
///
/// Oldest first: creation, changes, escalations, comments.
#[utoipa::path(get, path = "/api/v1/tickets/{id}/activities", tag = "Tickets",
    params(("id" = uuid::Uuid, Path, description = "Ticket id"), PageQuery),
    responses((status = 200, description = "A page of timeline entries", body = Paged<Activity>)))]
fn list_activities() {}
