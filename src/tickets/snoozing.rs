//! What a PATCH of a ticket adds to its fields: `snoozedUntil`, and the
//! rule that a parent waits for its open children unless forced.

use axum::http::StatusCode;
use uuid::Uuid;

use super::TicketWrites;
use super::model::{Ticket, TicketStatus};
use super::store;
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult, ErrorCode, FieldError};
use crate::time::Timestamp;
use crate::validate::{Patch, problem};

/// `snoozedUntil` (None: wake; an instant still to come) and `force`.
pub(super) fn patched(
    snoozed_until: &Patch<String>,
    force: &Patch<bool>,
    now: Timestamp,
) -> Result<(Option<Timestamp>, bool), Vec<FieldError>> {
    let force = match force {
        Patch::Missing => Ok(false),
        Patch::Null => Err(problem("force", "must not be null")),
        Patch::Value(force) => Ok(*force),
    };
    let until = match snoozed_until {
        Patch::Missing | Patch::Null => Ok(None),
        Patch::Value(text) => instant_to_come(text, now).map(Some),
    };
    match (until, force) {
        (Ok(until), Ok(force)) => Ok((until, force)),
        (until, force) => Err([until.err(), force.err()].into_iter().flatten().collect()),
    }
}

/// An RFC 3339 instant after `now` (and before the year 10000).
fn instant_to_come(text: &str, now: Timestamp) -> Result<Timestamp, FieldError> {
    let field = "snoozedUntil";
    let at = chrono::DateTime::parse_from_rfc3339(text)
        .map_err(|_| {
            problem(
                field,
                "must be an RFC 3339 instant, e.g. 2026-11-24T09:00:00Z",
            )
        })?
        .with_timezone(&chrono::Utc);
    if at <= now.0 {
        return Err(problem(
            field,
            "must be in the future (null wakes the ticket)",
        ));
    }
    if at > crate::reports::routes::latest() {
        return Err(problem(field, "must be before 9999-12-31"));
    }
    Ok(Timestamp::from_datetime(at))
}

/// 409 `open_children` when `status` resolves or closes a parent whose
/// children are not all resolved or closed, unless `force` or the company
/// allows it (`resolveParentsWithOpenChildren`).
pub(super) async fn ensure_children_closed(
    state: &TicketWrites,
    tenant: &Tenant,
    id: Uuid,
    status: Option<TicketStatus>,
    force: bool,
) -> ApiResult<()> {
    if force || !matches!(status, Some(TicketStatus::Resolved | TicketStatus::Closed)) {
        return Ok(());
    }
    let open = store::open_children(&state.db, tenant, id).await?;
    if open.is_empty() {
        return Ok(());
    }
    let company = tenant.company_id;
    if crate::settings::store::resolves_parents_with_open_children(&state.db, company).await? {
        return Ok(());
    }
    Err(ApiError::new(
        StatusCode::CONFLICT,
        ErrorCode::OpenChildren,
        format!(
            "Child tickets are still open: {}; resolve them first or send force: true",
            open.join(", ")
        ),
    ))
}

/// Snoozes ticket `id` until `until` (None wakes it), by `db`'s actor;
/// `expected`: the version `If-Match` named.
pub(super) async fn snooze(
    state: &TicketWrites,
    db: &crate::db::Db,
    tenant: &Tenant,
    id: Uuid,
    until: Option<Timestamp>,
    expected: Option<i64>,
) -> Result<Ticket, crate::error::StoreError> {
    store::snooze(
        db,
        tenant,
        id,
        until,
        expected,
        state.clock.now(),
        &state.link_signer(),
    )
    .await
}
