//! `/tickets/{id}/comments`: add and list a ticket's comments.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa_axum::routes;

use super::delivery::Delivery;
use super::model::{AuthorType, COMMENT_MAX, Comment, NewComment};
use super::nested::ticket_page;
use super::store;
use super::versions::{IfMatch, VersionConflict, refused};
use crate::attachments::links::Signer;
use crate::attachments::model::attachment_ids;
use crate::auth::{Principal, Scope};
use crate::db::Db;
use crate::error::ApiResult;
use crate::extract::{Id, Json, Query};
use crate::idempotency::RequestState;
use crate::paging::{After, CursorPage, Cursors, ListRequest};
use crate::router::ApiRouter;
use crate::validate::{Fields, optional_enum, optional_id, problem, required_text};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::TicketsRead, routes!(list))
        // A viewer's session passes on `tickets:read` to post an internal
        // note (`Commenter`); every other caller still needs `tickets:write`.
        .route_or(Scope::TicketsWrite, &[Scope::TicketsRead], routes!(create))
}

/// Who posts a comment: a caller holding `tickets:write`, or an agent whose
/// role posts internal notes only (the built-in `viewer`). Anyone else gets
/// the route's 403 before the body is read, as the scope check answers.
pub(crate) struct Commenter {
    principal: Principal,
    notes_only: bool,
}

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Commenter {
    type Rejection = crate::error::ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, Self::Rejection> {
        let principal =
            <Principal as axum::extract::FromRequestParts<S>>::from_request_parts(parts, state)
                .await?;
        let notes_only = principal.posts_only_internal_notes();
        if !notes_only && !principal.scopes.contains(Scope::TicketsWrite) {
            return Err(forbidden_write());
        }
        Ok(Commenter {
            principal,
            notes_only,
        })
    }
}

fn forbidden_write() -> crate::error::ApiError {
    crate::error::ApiError::forbidden_scope(Scope::TicketsWrite.as_str())
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateComment {
    #[schema(schema_with = body_schema, required)]
    body: Option<String>,
    /// A user of the company.
    #[schema(schema_with = crate::openapi::schema::uuid)]
    author_id: Option<String>,
    /// Internal notes are for agents only (default false).
    is_internal: Option<bool>,
    /// `agent` (default) or `customer`: a customer's comment starts the
    /// SLA next-response clock, an agent's public one meets it. A
    /// customer's comment cannot be internal.
    #[schema(schema_with = crate::openapi::schema::author_type)]
    author_type: Option<String>,
    /// Up to 10 unattached uploads of the company and mode to attach.
    #[schema(value_type = Option<Vec<uuid::Uuid>>)]
    attachment_ids: Option<serde_json::Value>,
    /// An agent's public reply only: deliver it at this instant (RFC 3339,
    /// still to come, within a year) instead of at the end of the undo
    /// window; until then it is `scheduled` and `DELETE` cancels it.
    #[schema(value_type = Option<chrono::DateTime<chrono::Utc>>)]
    send_at: Option<String>,
}

fn body_schema() -> utoipa::openapi::ObjectBuilder {
    crate::openapi::schema::required_text(COMMENT_MAX)
}

/// Comment on a ticket
///
/// A viewer's session posts internal notes only (`isInternal: true`; a
/// public reply is 403 `insufficient_scope`, `tickets:write`).
/// Emits `comment.created`. An agent's public reply is held for the undo
/// window (`deliveryState: held`, `sendAt` its end), or scheduled for its
/// `sendAt`, and emitted, delivered and shown to readers who see what the
/// customer sees only then; `DELETE` cancels it until then. An internal
/// note's `@` mentions reach the agents it names. With `If-Match` on a version the ticket is no
/// longer at, nothing is added: 412 `version_conflict` with the changes
/// since.
#[utoipa::path(post, path = "/tickets/{id}/comments", operation_id = "create_comment",
    tag = "Tickets",
    request_body = CreateComment,
    params(("id" = uuid::Uuid, Path, description = "Ticket id"),
        ("If-Match" = Option<String>, Header, description = "The ticket's version the change is based on (its `ETag`, `\"<version>\"`): when the ticket is at another version now, nothing changes and the answer is 412 `version_conflict`. `*` or no header: any version.")),
    responses((status = 201, description = "Created", body = Comment),
        (status = 412, description = "`version_conflict`: the ticket is no longer at the version `If-Match` named; nothing changed. `details` has a line per change since, `changes` the timeline entries, `currentVersion` the version now.", body = VersionConflict)))]
async fn create(
    RequestState(state): RequestState,
    Commenter {
        principal,
        notes_only,
    }: Commenter,
    Id(ticket_id): Id,
    IfMatch(expected): IfMatch,
    Json(body): Json<CreateComment>,
) -> ApiResult<(StatusCode, Json<Comment>)> {
    let is_internal = body.is_internal.unwrap_or(false);
    if notes_only && !is_internal {
        return Err(forbidden_write());
    }
    let author_type =
        optional_enum("authorType", body.author_type.as_deref()).and_then(|t| {
            match t.unwrap_or(AuthorType::Agent) {
                AuthorType::Customer if is_internal => Err(problem(
                    "authorType",
                    "a customer's comment cannot be internal (isInternal: true)",
                )),
                author_type => Ok(author_type),
            }
        });
    let now = state.clock.now();
    let (text, author_id, author_type, files, send_at) = (
        required_text("body", body.body.as_deref(), COMMENT_MAX),
        optional_id("authorId", body.author_id.as_deref()),
        author_type,
        attachment_ids("attachmentIds", body.attachment_ids.as_ref()),
        super::sending::send_at(body.send_at.as_deref(), now),
    )
        .all_valid()?;
    let delivery = match (author_type, is_internal, send_at) {
        (AuthorType::Agent, false, send_at) => {
            Delivery::of_reply(now, send_at, state.config.undo_send.as_secs())
        }
        (_, _, None) => Delivery::Now,
        (_, _, Some(_)) => {
            let message = "only an agent's public reply is scheduled";
            return Err(crate::error::ApiError::invalid_field("sendAt", message));
        }
    };
    let author_id = comment_author(&principal, author_id)?;
    let assign_on_reply = match principal.acting_user() {
        Some(agent) if !is_internal && author_type == AuthorType::Agent => {
            crate::settings::store::assigns_on_reply(&state.db, principal.tenant.company_id)
                .await?
                .then_some(agent)
        }
        _ => None,
    };
    let new = NewComment {
        body: text,
        author_id,
        author_type,
        is_internal,
        attachment_ids: files,
        assign_on_reply,
        delivery,
    };
    // An agent's public reply on an email ticket also leaves by email.
    let comment = crate::sequences::email_outbound::comment(
        &state.db.acting(principal.actor()),
        &principal.tenant,
        ticket_id,
        new,
        expected,
        now,
        &state.link_signer(),
    )
    .await;
    let comment = match comment {
        Ok(comment) => comment,
        Err(error) => {
            let tenant = &principal.tenant;
            return Err(refused(&state.db, tenant, ticket_id, expected, error).await);
        }
    };
    super::mentions::announce(&state, &principal.tenant, &principal.actor(), &comment).await;
    Ok((StatusCode::CREATED, Json(comment)))
}

/// Who a comment is by (docs/api.md, "Who wrote a comment"). An agent
/// (signed in by session, or by their personal key) writes as themselves:
/// no `authorId` means them, and another user's id is refused (an agent
/// may not put words in a colleague's name). A company key writes
/// author-less unless it names an agent, which takes `comments:as_agent`:
/// the key stays the actor of the timeline entry, the agent is the author.
pub(crate) fn comment_author(
    principal: &Principal,
    author_id: Option<uuid::Uuid>,
) -> ApiResult<Option<uuid::Uuid>> {
    match (principal.acting_user(), author_id) {
        (Some(agent), None) => Ok(Some(agent)),
        (Some(agent), Some(named)) if named == agent => Ok(Some(named)),
        (Some(_), Some(_)) => Err(crate::error::ApiError::validation(vec![problem(
            "authorId",
            "an agent writes as themselves: leave authorId out or give your own id",
        )])),
        (None, Some(_)) if !principal.scopes.contains(Scope::CommentsAsAgent) => Err(
            crate::error::ApiError::forbidden_scope(Scope::CommentsAsAgent.as_str()),
        ),
        (None, named) => Ok(named),
    }
}

/// List a ticket's comments
#[utoipa::path(get, path = "/tickets/{id}/comments", operation_id = "list_comments",
    tag = "Tickets",
    params(("id" = uuid::Uuid, Path, description = "Ticket id"), ListRequest),
    responses((status = 200, description = "A page of comments", body = CursorPage<Comment>)))]
async fn list(
    State(db): State<Db>,
    State(cursors): State<Arc<Cursors>>,
    State(signer): State<Signer>,
    principal: Principal,
    Id(ticket_id): Id,
    Query(query): Query<ListRequest>,
) -> ApiResult<Json<CursorPage<Comment>>> {
    let (db, signer, principal) = (&db, &signer, &principal);
    let read = |page, after: Option<After>| async move {
        store::list_comments(
            db,
            &principal.tenant,
            ticket_id,
            principal.reads_internal_notes(),
            page,
            after.as_ref(),
            signer,
        )
        .await
    };
    let position = |row: &Comment| After {
        created_at: row.created_at,
        id: row.id,
    };
    ticket_page(
        &cursors,
        principal,
        "ticket_comments",
        ticket_id,
        &query,
        read,
        position,
    )
    .await
}
