//! `POST /tickets/bulk`: one change (a PATCH's fields, or a macro) applied
//! to up to 1,000 tickets. Each ticket commits on its own, as its PATCH or
//! macro application would, so one refused ticket is reported and the rest
//! still change. The answer lists every ticket's outcome; sent again with
//! the same `Idempotency-Key`, the request is answered from the first and
//! changes nothing twice (every ticket's transaction marks the key).

use axum::extract::FromRef;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::routes;
use uuid::Uuid;

use super::macros::{MacroDeps, application};
use super::update::{PatchChange, UpdateBody, ticket_update, update_one};
use crate::auth::{Principal, Scope};
use crate::db::Backend;
use crate::error::{ApiError, ApiResult, ErrorCode, FieldError, StoreError};
use crate::extract::Json;
use crate::idempotency::RequestState;
use crate::macros::apply;
use crate::openapi::schema::{self, ErrorBody};
use crate::router::ApiRouter;
use crate::validate::{Fields, problem, required_id};

/// The most tickets one bulk request changes.
pub const BULK_MAX: usize = 1_000;

pub fn router() -> ApiRouter {
    ApiRouter::new().route(Scope::TicketsWrite, routes!(bulk))
}

#[derive(Deserialize, ToSchema)]
#[schema(as = BulkTicketChange)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct BulkBody {
    /// 1 to 1,000 tickets of the company and mode (repeats count once).
    #[schema(value_type = Vec<uuid::Uuid>, min_items = 1, max_items = 1000)]
    ticket_ids: Option<Value>,
    /// The change, as a PATCH of one ticket takes it. Give this or
    /// `macroId`.
    changes: Option<UpdateBody>,
    /// A macro the caller sees (needs `macros:read`). Give this or
    /// `changes`.
    #[schema(schema_with = schema::uuid)]
    macro_id: Option<String>,
}

/// One ticket's outcome.
#[derive(Serialize, ToSchema)]
#[schema(as = BulkTicketResult)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Outcome {
    ticket_id: Uuid,
    /// `updated` (committed) or `failed` (unchanged; see `error`).
    #[schema(example = "updated")]
    status: &'static str,
    /// Why the ticket was not changed, as the single request would have
    /// answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    error: Option<ErrorBody>,
}

#[derive(Serialize, ToSchema)]
#[schema(as = BulkTicketResults)]
pub(crate) struct Results {
    /// One per ticket, in the order given.
    results: Vec<Outcome>,
}

/// What each ticket gets.
enum Change {
    Fields(PatchChange),
    Macro(Box<(crate::macros::Macro, apply::Application)>),
}

/// Change many tickets
///
/// Applies `changes` (a PATCH's fields) or the macro `macroId` to each of
/// `ticketIds`, each ticket in its own transaction with the timeline
/// entries and events its single change records. 200 with every ticket's
/// outcome, even when some failed; more than 1,000 tickets is a 400 that
/// changes nothing.
#[utoipa::path(post, path = "/tickets/bulk", operation_id = "bulk_update_tickets",
    tag = "Tickets",
    request_body = BulkBody,
    responses((status = 200, description = "Each ticket's outcome", body = Results)))]
async fn bulk(
    RequestState(state): RequestState,
    principal: Principal,
    Json(body): Json<BulkBody>,
) -> ApiResult<Json<Results>> {
    let (ids, macro_id) = (
        ticket_ids(body.ticket_ids.as_ref()),
        match (&body.changes, body.macro_id.as_deref()) {
            (Some(_), None) => Ok(None),
            (None, Some(raw)) => required_id("macroId", Some(raw)).map(Some),
            _ => Err(problem("body", "give exactly one of: changes, macroId")),
        },
    )
        .all_valid()?;
    let change = match (&body.changes, macro_id) {
        (_, Some(macro_id)) => {
            // The macro is a reference in the body: one the caller does not
            // see is the body's fault (400), not a missing path (404).
            let (found, who) =
                application(&MacroDeps::from_ref(&state), &principal, macro_id, None)
                    .await
                    .map_err(|error| match error.code {
                        ErrorCode::NotFound => ApiError::invalid_field(
                            "macroId",
                            "no macro of the company you see has this id",
                        ),
                        _ => error,
                    })?;
            Change::Macro(Box::new((found, who)))
        }
        (Some(changes), None) => {
            let definitions =
                crate::macros::routes::definitions(&state.field_definitions, &state.db, &principal)
                    .await?;
            Change::Fields(ticket_update(changes, &definitions, state.clock.now())?)
        }
        (None, None) => return Err(ApiError::invalid_field("body", "give changes or macroId")),
    };
    let db = state.db.acting(principal.actor());
    let tenant = principal.tenant;
    // SQLite takes one writer at a time: more at once would only wait.
    let at_once = match db.backend() {
        Backend::Postgres => 8,
        Backend::Sqlite => 1,
    };
    let writes = super::TicketWrites::from_ref(&state);
    let one = |id: Uuid| {
        let (writes, db, change) = (&writes, &db, &change);
        async move {
            let done: ApiResult<()> = match change {
                Change::Fields(update) => update_one(writes, db, &tenant, id, update.clone(), None)
                    .await
                    .map(drop),
                Change::Macro(parts) => {
                    let (found, who) = parts.as_ref();
                    let now = writes.clock.now();
                    let signer = writes.link_signer();
                    apply::apply(db, &tenant, id, found, who.clone(), now, &signer)
                        .await
                        .map(drop)
                        .map_err(|error: StoreError| error.into())
                }
            };
            outcome(id, done)
        }
    };
    let results: Vec<Outcome> = futures::stream::iter(ids)
        .map(one)
        .buffered(at_once)
        .collect()
        .await;
    Ok(Json(Results { results }))
}

/// The ticket ids: 1 to `BULK_MAX` ids, repeats dropped, in order.
fn ticket_ids(raw: Option<&Value>) -> Result<Vec<Uuid>, FieldError> {
    let field = "ticketIds";
    let Some(Value::Array(items)) = raw else {
        return Err(problem(field, "is required: an array of ticket ids"));
    };
    if items.is_empty() {
        return Err(problem(field, "must name at least one ticket"));
    }
    if items.len() > BULK_MAX {
        return Err(problem(
            field,
            format!("at most {BULK_MAX} tickets per request; split the change"),
        ));
    }
    let mut seen = std::collections::HashSet::new();
    let mut ids = Vec::with_capacity(items.len());
    for item in items {
        let id = required_id(field, item.as_str())
            .map_err(|_| problem(field, "must be an array of ticket ids"))?;
        if seen.insert(id) {
            ids.push(id);
        }
    }
    Ok(ids)
}

fn outcome(ticket_id: Uuid, done: ApiResult<()>) -> Outcome {
    match done {
        Ok(()) => Outcome {
            ticket_id,
            status: "updated",
            error: None,
        },
        Err(error) => Outcome {
            ticket_id,
            status: "failed",
            error: Some(ErrorBody {
                error: error.message,
                code: error.code.as_str().to_string(),
                status: error.status.as_u16(),
                details: (!error.details.is_empty()).then_some(error.details),
                merged_into: error
                    .extra
                    .get("mergedInto")
                    .and_then(|id| id.as_str())
                    .and_then(|id| uuid::Uuid::parse_str(id).ok()),
            }),
        },
    }
}
