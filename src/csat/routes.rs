//! `GET /ratings`, and the agents' `request-rating` on a chat or a ticket.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa_axum::routes;

use super::links::RatingLinks;
use super::model::{Rating, RatingFilter, RatingTarget, Refusal, SCORE_MAX, SCORE_MIN};
use super::notify;
use super::store::{self, RateError};
use crate::auth::{Principal, Scope};
use crate::db::Db;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::extract::{Id, Json, Query};
use crate::idempotency::RequestState;
use crate::openapi::schema::ErrorBody;
use crate::paging::Cursors;
use crate::paging::{After, CursorPage, ListId, ListRequest};
use crate::reports::routes::{Edge, bound};
use crate::router::ApiRouter;
use crate::time::Timestamp;
use crate::validate::{Fields, optional_id, problem};

const LIST_DEFAULT: i64 = 20;
const LIST_MAX: i64 = 100;

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::ReportsRead, routes!(list))
        .route(Scope::ChatWrite, routes!(request_chat_rating))
        .route(Scope::TicketsWrite, routes!(request_ticket_rating))
}

/// The answer to a refused rating or request, in our error shape.
pub fn refused(err: RateError) -> ApiError {
    let refusal = match err {
        RateError::Refused(refusal) => refusal,
        RateError::Store(err) => return err.into(),
    };
    match refusal {
        Refusal::Off => ApiError::new(
            StatusCode::FORBIDDEN,
            ErrorCode::CsatOff,
            "Satisfaction ratings are turned off for this entity",
        ),
        Refusal::NotFinished => {
            ApiError::conflict("Only a closed chat or a resolved (or closed) ticket can be rated")
        }
        Refusal::NotRequested => ApiError::conflict(
            "No rating was requested for this chat or ticket (the entity's csat setting is manual)",
        ),
        Refusal::Locked => {
            ApiError::conflict("A rating can be changed for 7 days after it was first submitted")
        }
    }
}

#[derive(Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct RatingParams {
    #[param(value_type = Option<uuid::Uuid>)]
    entity_id: Option<String>,
    /// Ratings first submitted from this date (YYYY-MM-DD) or RFC 3339 time on.
    #[param(value_type = Option<String>)]
    from: Option<String>,
    /// Ratings first submitted before the end of this date, or before this time.
    #[param(value_type = Option<String>)]
    to: Option<String>,
    /// Only ratings with this score (1-5).
    #[param(value_type = Option<i64>, minimum = 1, maximum = 5)]
    score: Option<String>,
}

fn score_filter(raw: Option<&str>) -> Result<Option<i64>, crate::error::FieldError> {
    match raw.map(str::trim).filter(|r| !r.is_empty()) {
        None => Ok(None),
        Some(raw) => match raw.parse::<i64>() {
            Ok(n) if (SCORE_MIN..=SCORE_MAX).contains(&n) => Ok(Some(n)),
            _ => Err(problem("score", "must be a whole number from 1 to 5")),
        },
    }
}

/// List satisfaction ratings
///
/// The ratings of the key's company and mode, newest first (by first
/// submission), optionally of one entity, one period and one score.
#[utoipa::path(get, path = "/ratings", operation_id = "list_ratings", tag = "Ratings",
    params(RatingParams, ListRequest),
    responses((status = 200, description = "A page of ratings", body = CursorPage<Rating>)))]
async fn list(
    State(db): State<Db>,
    State(cursors): State<Arc<Cursors>>,
    principal: Principal,
    Query(params): Query<RatingParams>,
    Query(paging): Query<ListRequest>,
) -> ApiResult<Json<CursorPage<Rating>>> {
    let (entity_id, from, to, score, (page, after)) = (
        optional_id("entityId", params.entity_id.as_deref()),
        bound("from", params.from.as_deref(), Edge::Start),
        bound("to", params.to.as_deref(), Edge::End),
        score_filter(params.score.as_deref()),
        paging.check(LIST_DEFAULT, LIST_MAX),
    )
        .all_valid()?;
    if let (Some(from), Some(to)) = (from, to)
        && from >= to
    {
        return Err(ApiError::invalid_field("from", "must be before to"));
    }
    let filter = RatingFilter {
        entity_id,
        from,
        to,
        score,
    };
    let list = ListId::new("ratings", &principal.tenant, &filter);
    let after = cursors.open_after(&list, after.as_deref())?;
    let (rows, total) = store::list(&db, &principal.tenant, &filter, page, after.as_ref()).await?;
    Ok(Json(CursorPage::by_time(
        rows,
        total,
        page,
        &cursors,
        &list,
        |row: &Rating| After {
            created_at: row.created_at,
            id: row.id,
        },
    )))
}

/// What a rating request did.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RatingRequested {
    pub requested_at: Timestamp,
    /// Tickets: whether the rating link was mailed to the ticket's
    /// `visitorEmail`. Chats: always false (the widget is asked over the
    /// socket with a `rating_requested` frame).
    pub email_sent: bool,
}

/// Ask a chat's visitor for a rating
///
/// The chat must be closed. Makes a rating possible when the entity's
/// `csat` setting is `manual`, and pushes a `rating_requested` frame to the
/// session's channel, where the widget shows its rating card.
#[utoipa::path(post, path = "/chat/sessions/{id}/request-rating", tag = "Chat",
    operation_id = "request_chat_rating",
    params(("id" = uuid::Uuid, Path, description = "Session id")),
    responses(
        (status = 200, description = "Requested", body = RatingRequested),
        (status = 403, description = "`csat_off`: the entity's ratings are off", body = ErrorBody),
        (status = 409, description = "`conflict`: the chat is not closed", body = ErrorBody)))]
async fn request_chat_rating(
    RequestState(state): RequestState,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<RatingRequested>> {
    let tenant = &principal.tenant;
    let now = state.clock.now();
    let requested = store::request(&state.db, tenant, RatingTarget::Chat(id), "", now)
        .await
        .map_err(refused)?;
    notify::ask_in_chat(&state.realtime, tenant, id).await;
    Ok(Json(RatingRequested {
        requested_at: requested.requested_at,
        email_sent: false,
    }))
}

/// Ask a ticket's visitor for a rating
///
/// The ticket must be resolved (or closed). Makes a rating possible when
/// the entity's `csat` setting is `manual`, and mails the ticket's
/// `visitorEmail` (if any) a signed rating link that needs no other
/// credential. Asking again sends another email.
#[utoipa::path(post, path = "/tickets/{id}/request-rating", tag = "Tickets",
    operation_id = "request_ticket_rating",
    params(("id" = uuid::Uuid, Path, description = "Ticket id")),
    responses(
        (status = 200, description = "Requested", body = RatingRequested),
        (status = 403, description = "`csat_off`: the entity's ratings are off", body = ErrorBody),
        (status = 409, description = "`conflict`: the ticket is not resolved", body = ErrorBody)))]
async fn request_ticket_rating(
    RequestState(state): RequestState,
    principal: Principal,
    Id(id): Id,
) -> ApiResult<Json<RatingRequested>> {
    let now = state.clock.now();
    let links = RatingLinks::load(&state.db).await?;
    let link = links.url(&state.public_url, RatingTarget::Ticket(id), now);
    let requested = store::request(
        &state.db,
        &principal.tenant,
        RatingTarget::Ticket(id),
        &link,
        now,
    )
    .await
    .map_err(refused)?;
    Ok(Json(RatingRequested {
        requested_at: requested.requested_at,
        email_sent: requested.email_sent,
    }))
}
