//! Scheduled replies and undo send, the service's side: a reply's
//! `sendAt`, `DELETE /tickets/{id}/comments/{commentId}` (cancel one not
//! yet sent) and the delivery pass that sends held and scheduled replies
//! when their time comes (`tickets::store::deliver_due`; every second on
//! each node, one node at a time on Postgres). Tests run `deliver_due`
//! with the clock moved forward instead of waiting for the pass.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use utoipa_axum::routes;

use super::model::Comment;
use super::store;
use crate::attachments::Attachments;
use crate::auth::{Principal, Scope};
use crate::db::Db;
use crate::error::{ApiResult, FieldError};
use crate::extract::{Ids, Json};
use crate::router::ApiRouter;
use crate::time::{Clock, Timestamp};
use crate::validate::problem;

/// How often a node looks for replies to deliver.
const EVERY: Duration = Duration::from_secs(1);

/// The furthest ahead a reply may be scheduled.
const SCHEDULE_MAX: Duration = Duration::from_secs(366 * 24 * 3600);

pub fn router() -> ApiRouter {
    ApiRouter::new().route(Scope::TicketsWrite, routes!(cancel))
}

/// `sendAt`: an RFC 3339 instant after `now`, at most a year ahead.
pub(crate) fn send_at(
    value: Option<&str>,
    now: Timestamp,
) -> Result<Option<Timestamp>, FieldError> {
    let Some(text) = value else {
        return Ok(None);
    };
    let at = chrono::DateTime::parse_from_rfc3339(text)
        .map(|at| Timestamp::from_datetime(at.with_timezone(&chrono::Utc)))
        .map_err(|_| {
            problem(
                "sendAt",
                "must be an RFC 3339 instant, e.g. 2026-11-24T09:00:00Z",
            )
        })?;
    if at <= now {
        return Err(problem("sendAt", "must be still to come"));
    }
    if at > now.plus(SCHEDULE_MAX) {
        return Err(problem("sendAt", "must be within a year"));
    }
    Ok(Some(at))
}

/// Cancel a reply not yet sent
///
/// A held reply (in its undo window) or a scheduled one is cancelled and
/// never delivered: no email, webhook or socket event; agents still see it
/// with `deliveryState: cancelled`. The audit log records who cancelled
/// it (`comment.cancelled`). One already sent is 409 `conflict`; one
/// cancelled already is answered as it is.
#[utoipa::path(delete, path = "/tickets/{id}/comments/{commentId}",
    operation_id = "cancel_comment", tag = "Tickets",
    params(
        ("id" = uuid::Uuid, Path, description = "Ticket id"),
        ("commentId" = uuid::Uuid, Path, description = "Comment id"),
    ),
    responses(
        (status = 200, description = "The cancelled comment", body = Comment),
        (status = 409, description = "The comment was sent already",
            body = crate::openapi::schema::ErrorBody),
    ))]
async fn cancel(
    State(state): State<crate::state::AppState>,
    principal: Principal,
    Ids(ticket_id, comment_id): Ids,
) -> ApiResult<Json<Comment>> {
    let comment = store::cancel_comment(
        &state.db.acting(principal.actor()),
        &principal.tenant,
        ticket_id,
        comment_id,
        &state.link_signer(),
        state.clock.now(),
    )
    .await?;
    Ok(Json(comment))
}

/// Runs the delivery pass every second (the first at once) until shutdown.
pub fn spawn(
    db: Db,
    attachments: Arc<Attachments>,
    clock: Clock,
    shutdown: watch::Receiver<bool>,
) -> JoinHandle<()> {
    let first = tokio::time::Instant::now();
    crate::time::every(shutdown, first, EVERY, move || {
        let (db, attachments, now) = (db.clone(), attachments.clone(), clock.now());
        async move {
            let signer = attachments.signer(now);
            let mail = crate::sequences::email_outbound::MailReply;
            match store::deliver_due(&db, now, &signer, &mail).await {
                Ok(0) => {}
                Ok(sent) => tracing::info!(sent, "held and scheduled replies delivered"),
                Err(err) => tracing::warn!(error = %err, "reply delivery pass failed"),
            }
        }
    })
}
