//! `GET /changes`: the tenant's change feed, read with a cursor.

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::routes;
use uuid::Uuid;

use super::model::{Cursor, Op, RecordType};
use super::store::{self, Entry, Read};
use crate::actor::Actor;
use crate::auth::{Principal, Scope};
use crate::db::Db;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::extract::{Json, Query};
use crate::openapi::schema::ErrorBody;
use crate::router::ApiRouter;
use crate::validate::{Fields, Page, problem};

const LIST_DEFAULT: i64 = 100;
const LIST_MAX: i64 = 1000;

/// The route needs `tickets:read` (the feed's base types); the chat and
/// knowledge-base types each need their own read scope on top, checked by
/// the handler.
pub fn router() -> ApiRouter {
    ApiRouter::new().route(Scope::TicketsRead, routes!(list))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct ChangesQuery {
    /// The `nextCursor` (or an entry's `cursor`) of an earlier read; absent:
    /// from the oldest entry still retained.
    since: Option<String>,
    /// Comma-separated types among `ticket`, `comment`, `chat_session`,
    /// `chat_message`, `kb_article`; absent: every type the key can read.
    types: Option<String>,
    /// At most this many entries, up to 1000 (default 100).
    #[param(value_type = Option<i64>, minimum = 1)]
    limit: Option<String>,
}

/// One change of one record.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ChangeEntry {
    #[serde(rename = "type")]
    #[schema(value_type = String, example = "ticket")]
    record_type: RecordType,
    id: Uuid,
    #[schema(value_type = String, example = "upsert")]
    op: Op,
    /// The record as its GET returns it after the change; null for deletes.
    #[schema(value_type = Option<Object>)]
    record: Option<Value>,
    /// Who made the change; null for an entry recorded before entries
    /// named their actor.
    actor: Option<Actor>,
    /// The position just after this entry.
    cursor: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ChangePage {
    data: Vec<ChangeEntry>,
    /// Where to continue (`since`); never null: at the end of the feed it
    /// is the current end, to poll again later.
    next_cursor: String,
}

/// Read the change feed
///
/// The records created, updated or deleted after `since`, in commit order.
/// A client that applies every entry from the start (upsert: store the
/// record; delete: remove it) holds exactly the service's data. A cursor
/// whose entries the retention period has removed is 410 `cursor_expired`:
/// re-sync from the lists and continue from the `nextCursor` of a read
/// without `since` made before the re-sync.
#[utoipa::path(get, path = "/changes", operation_id = "list_changes", tag = "Changes",
    params(ChangesQuery),
    responses(
        (status = 200, description = "Entries after the cursor", body = ChangePage),
        (status = 410, description = "Entries after the cursor are no longer retained \
            (`cursor_expired`)", body = ErrorBody),
    ))]
async fn list(
    State(db): State<Db>,
    principal: Principal,
    Query(query): Query<ChangesQuery>,
) -> ApiResult<Json<ChangePage>> {
    let (page, since, types) = (
        Page::check(query.limit.as_deref(), None, LIST_DEFAULT, LIST_MAX),
        parse_since(query.since.as_deref()),
        parse_types(query.types.as_deref()),
    )
        .all_valid()?;
    let types = readable(&principal, types)?;
    let notes = principal.reads_internal_notes();
    let read = store::read(&db, &principal.tenant, since, &types, notes, page.limit).await?;
    match read {
        Read::Page { entries, next } => Ok(Json(ChangePage {
            data: entries.into_iter().map(entry).collect(),
            next_cursor: next.encode(),
        })),
        Read::Expired => Err(ApiError::new(
            StatusCode::GONE,
            ErrorCode::CursorExpired,
            "Changes after this cursor are no longer retained; re-sync from the lists",
        )),
        Read::Unknown => Err(ApiError::invalid_field(
            "since",
            "is not a cursor of this feed",
        )),
    }
}

fn parse_since(since: Option<&str>) -> Result<Option<Cursor>, crate::error::FieldError> {
    match since.map(str::trim) {
        None | Some("") => Ok(None),
        Some(text) => Cursor::decode(text)
            .map(Some)
            .ok_or_else(|| problem("since", "is not a cursor of this feed")),
    }
}

/// The types asked for, or None for "every type the key can read".
fn parse_types(types: Option<&str>) -> Result<Option<Vec<RecordType>>, crate::error::FieldError> {
    let Some(text) = types.map(str::trim).filter(|text| !text.is_empty()) else {
        return Ok(None);
    };
    let mut wanted = Vec::new();
    for name in text.split(',').map(str::trim) {
        let kind = name.parse::<RecordType>().map_err(|_| {
            problem(
                "types",
                format!(
                    "{name:?} is not a type; use: {}",
                    RecordType::NAMES.join(", ")
                ),
            )
        })?;
        if !wanted.contains(&kind) {
            wanted.push(kind);
        }
    }
    Ok(Some(wanted))
}

/// A type asked for by name that the key cannot read is a 403 (asking is a
/// mistake worth telling); without `types`, the types it cannot read are
/// left out.
fn readable(
    principal: &Principal,
    types: Option<Vec<RecordType>>,
) -> Result<Vec<RecordType>, ApiError> {
    let can_read = |kind: &RecordType| principal.scopes.contains(kind.read_scope());
    match types {
        None => Ok(RecordType::ALL.iter().copied().filter(can_read).collect()),
        Some(types) => match types.iter().find(|kind| !can_read(kind)) {
            Some(kind) => Err(ApiError::forbidden_scope(kind.read_scope().as_str())),
            None => Ok(types),
        },
    }
}

fn entry(entry: Entry) -> ChangeEntry {
    ChangeEntry {
        record_type: entry.record_type,
        id: entry.record_id,
        op: entry.op,
        record: entry.record.map(|json| json.0),
        actor: entry.actor.map(|json| json.0),
        cursor: Cursor(entry.seq).encode(),
    }
}
