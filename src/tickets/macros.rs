//! `POST /tickets/{id}/macros/{macroId}/preview` and `…/apply`: a macro
//! the caller sees, applied to a ticket in one transaction (or shown as it
//! would be, writing nothing). Bulk changes apply macros through
//! [`application`] too.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{FromRef, State};
use utoipa_axum::routes;

use super::versions::{IfMatch, VersionConflict, Versioned, refused};
use crate::attachments::Attachments;
use crate::attachments::links::Signer;
use crate::auth::{Principal, Scope};
use crate::custom_fields::DefinitionCache;
use crate::custom_fields::model::{RecordKind, check_values};
use crate::db::Db;
use crate::error::{ApiError, ApiResult};
use crate::extract::Ids;
use crate::idempotency::RequestState;
use crate::macros::apply::{self, Application, Applied};
use crate::macros::{Macro, store as macro_store};
use crate::router::ApiRouter;
use crate::state::AppState;
use crate::time::Clock;

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::TicketsWrite, routes!(preview))
        .route(Scope::TicketsWrite, routes!(apply_macro))
}

/// What applying a macro reads: the store and the clock, the company's
/// custom fields (a macro's values are checked against them), the
/// attachment links of the answer, and how long a reply may be undone.
#[derive(Clone)]
pub(crate) struct MacroDeps {
    pub db: Db,
    pub clock: Clock,
    pub field_definitions: Arc<DefinitionCache>,
    pub attachments: Arc<Attachments>,
    /// `SUPPORTDESK_UNDO_SEND_SECS`.
    pub undo_send: Duration,
}

impl MacroDeps {
    /// The signer of attachment links in what is read now.
    pub fn link_signer(&self) -> Signer {
        self.attachments.signer(self.clock.now())
    }
}

impl FromRef<AppState> for MacroDeps {
    fn from_ref(state: &AppState) -> MacroDeps {
        MacroDeps {
            db: state.db.clone(),
            clock: state.clock.clone(),
            field_definitions: state.field_definitions.clone(),
            attachments: state.attachments.clone(),
            undo_send: state.config.undo_send,
        }
    }
}

/// The macro `macro_id` as `principal` sees it, and how they apply it:
/// 403 without `macros:read`, 404 for a macro they do not see, 400 when
/// its custom field values no longer fit the company's fields.
pub(crate) async fn application(
    state: &MacroDeps,
    principal: &Principal,
    macro_id: uuid::Uuid,
    expected: Option<i64>,
) -> ApiResult<(Macro, Application)> {
    if !principal.scopes.contains(Scope::MacrosRead) {
        return Err(ApiError::forbidden_scope(Scope::MacrosRead.as_str()));
    }
    let tenant = &principal.tenant;
    let found = macro_store::find(&state.db, tenant, principal.acting_user(), macro_id).await?;
    let custom_fields = match found.actions.custom_fields.is_empty() {
        true => Default::default(),
        false => {
            let definitions =
                crate::macros::routes::definitions(&state.field_definitions, &state.db, principal)
                    .await?;
            let given = serde_json::to_value(&found.actions.custom_fields)
                .map_err(|_| ApiError::internal())?;
            check_values(&definitions, RecordKind::Ticket, Some(&given), false, false)
                .map_err(ApiError::validation)?
        }
    };
    let who = Application {
        author_id: principal.acting_user(),
        agent_name: principal.actor().name,
        custom_fields,
        expected,
        reply_delivery: crate::tickets::delivery::Delivery::of_reply(
            state.clock.now(),
            None,
            state.undo_send.as_secs(),
        ),
    };
    Ok((found, who))
}

/// Preview a macro on a ticket
///
/// The ticket, reply and note as applying the macro would leave them;
/// nothing is written, announced or sent.
#[utoipa::path(post, path = "/tickets/{id}/macros/{macroId}/preview",
    operation_id = "preview_ticket_macro", tag = "Macros",
    params(
        ("id" = uuid::Uuid, Path, description = "Ticket id"),
        ("macroId" = uuid::Uuid, Path, description = "Macro id"),
        ("If-Match" = Option<String>, Header, description = "The ticket's version the change is based on (its `ETag`, `\"<version>\"`): when the ticket is at another version now, nothing changes and the answer is 412 `version_conflict`. `*` or no header: any version."),
    ),
    responses(
        (status = 200, description = "What applying would do", body = Applied),
        (status = 412, description = "`version_conflict`: the ticket is no longer at the version `If-Match` named; nothing changed. `details` has a line per change since, `changes` the timeline entries, `currentVersion` the version now.", body = VersionConflict),
    ))]
async fn preview(
    State(state): State<MacroDeps>,
    principal: Principal,
    Ids(id, macro_id): Ids,
    IfMatch(expected): IfMatch,
) -> ApiResult<crate::extract::Json<Applied>> {
    let (found, who) = application(&state, &principal, macro_id, expected).await?;
    let db = state.db.acting(principal.actor());
    let tenant = &principal.tenant;
    let now = state.clock.now();
    match apply::preview(&db, tenant, id, &found, who, now, &state.link_signer()).await {
        Ok(applied) => Ok(crate::extract::Json(applied)),
        Err(error) => Err(refused(&state.db, tenant, id, expected, error).await),
    }
}

/// Apply a macro to a ticket
///
/// Its changes, reply and note in one transaction: the timeline entries
/// and events a PATCH and a comment would record (`ticket.updated`,
/// `comment.created`), then `macro.applied`. `ETag` is the ticket's new
/// version.
#[utoipa::path(post, path = "/tickets/{id}/macros/{macroId}/apply",
    operation_id = "apply_ticket_macro", tag = "Macros",
    params(
        ("id" = uuid::Uuid, Path, description = "Ticket id"),
        ("macroId" = uuid::Uuid, Path, description = "Macro id"),
        ("If-Match" = Option<String>, Header, description = "The ticket's version the change is based on (its `ETag`, `\"<version>\"`): when the ticket is at another version now, nothing changes and the answer is 412 `version_conflict`. `*` or no header: any version."),
    ),
    responses(
        (status = 200, description = "What the macro did", body = Applied,
            headers(("ETag" = String, description = "The ticket's version, `\"<version>\"`: send it back as `If-Match`."))),
        (status = 412, description = "`version_conflict`: the ticket is no longer at the version `If-Match` named; nothing changed. `details` has a line per change since, `changes` the timeline entries, `currentVersion` the version now.", body = VersionConflict),
    ))]
async fn apply_macro(
    RequestState(state): RequestState,
    principal: Principal,
    Ids(id, macro_id): Ids,
    IfMatch(expected): IfMatch,
) -> ApiResult<Versioned<Applied>> {
    let state = MacroDeps::from_ref(&state);
    let (found, who) = application(&state, &principal, macro_id, expected).await?;
    let db = state.db.acting(principal.actor());
    let tenant = &principal.tenant;
    let now = state.clock.now();
    match apply::apply(&db, tenant, id, &found, who, now, &state.link_signer()).await {
        Ok(applied) => Ok(Versioned(applied.ticket.version, applied)),
        Err(error) => Err(refused(&state.db, tenant, id, expected, error).await),
    }
}
