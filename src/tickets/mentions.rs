//! Mentions: `GET /mentions`, the caller's own, and the `mention` frame
//! each agent a note mentions gets on their socket channel
//! (`agent:<userId>`) once the note has committed.

use std::sync::Arc;

use axum::extract::State;
use serde::Serialize;
use utoipa_axum::routes;

use super::model::Comment;
use crate::actor::Actor;
use crate::auth::{Principal, Scope, Tenant};
use crate::db::Db;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, Query};
use crate::paging::Cursors;
use crate::paging::{After, COUNT_CAP, CursorPage, ListId, ListRequest};
use crate::realtime::protocol::{self, Channel, Topic};
use crate::router::ApiRouter;
use crate::state::AppState;
use crate::tickets::store::mentions as store;
use ::tickets::mentions::Mention;

const LIST_DEFAULT: i64 = 20;
const LIST_MAX: i64 = 100;

pub fn router() -> ApiRouter {
    ApiRouter::new().route(Scope::TicketsWrite, routes!(list))
}

/// What a mentioned agent's socket gets.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MentionFrame<'a> {
    ticket_id: uuid::Uuid,
    comment_id: uuid::Uuid,
    body: &'a str,
    created_at: crate::time::Timestamp,
}

/// Tells each agent the internal note `comment` mentions, on their own
/// channel; a public comment mentions no one.
pub(crate) async fn announce(state: &AppState, tenant: &Tenant, actor: &Actor, comment: &Comment) {
    if !comment.is_internal || !comment.body.contains('@') {
        return;
    }
    let mentioned = match store::of_comment(&state.db, tenant, comment.id).await {
        Ok(mentioned) => mentioned,
        Err(err) => {
            tracing::warn!(error = %err, comment = %comment.id, "mentions not announced");
            return;
        }
    };
    let data = MentionFrame {
        ticket_id: comment.ticket_id,
        comment_id: comment.id,
        body: &comment.body,
        created_at: comment.created_at,
    };
    for user in mentioned {
        let channel = Channel::Agent(user);
        let frame = protocol::change("mention", &channel.name(), None, &data, Some(actor));
        let topic = Topic::new(*tenant, channel.into());
        state.realtime.publish(topic, None, frame).await;
    }
}

/// List my mentions
///
/// The internal notes that mention the calling agent (`@` and their
/// email's local part, or their whole email), newest first, on tickets
/// they see. Needs an agent: a session or a personal key (a company key
/// is 400). Paged as the ticket list.
#[utoipa::path(get, path = "/mentions", operation_id = "list_mentions", tag = "Tickets",
    params(ListRequest),
    responses((status = 200, description = "A page of mentions", body = CursorPage<Mention>)))]
async fn list(
    State(db): State<Db>,
    State(cursors): State<Arc<Cursors>>,
    principal: Principal,
    Query(request): Query<ListRequest>,
) -> ApiResult<Json<CursorPage<Mention>>> {
    // The request's own fields first: a bad `limit` is 400 naming it,
    // whoever asks.
    let (page, after) = request
        .check(LIST_DEFAULT, LIST_MAX)
        .map_err(ApiError::validation)?;
    let Some(user) = principal.acting_user() else {
        return Err(ApiError::invalid_field(
            "agent",
            "mentions are an agent's: sign in or use a personal key",
        ));
    };
    let list = ListId::new("mentions", &principal.tenant, &user);
    let after = cursors.open_after(&list, after.as_deref())?;
    let tenant = &principal.tenant;
    let (rows, total) = store::list(&db, tenant, user, page, after.as_ref(), COUNT_CAP).await?;
    let page = CursorPage::by_time(rows, total, page, &cursors, &list, |m| After {
        created_at: m.created_at,
        id: m.id,
    });
    Ok(Json(page))
}
