//! `GET /audit-log`: the company's audit entries, newest first, by actor,
//! action, target and time range, a page at a time (JSON) or all of them
//! streamed (`Accept: text/csv` or `application/x-ndjson`).

use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use utoipa_axum::routes;

use super::export::Format;
use super::list::{self, Filters};
use super::{Action, Entry, TargetType};
use crate::auth::{Principal, Scope};
use crate::db::Db;
use crate::error::{ApiResult, FieldError};
use crate::extract::{Json, Query};
use crate::openapi::schema;
use crate::paging::Cursors;
use crate::paging::{After, CursorPage, ListId, ListRequest};
use crate::router::ApiRouter;
use crate::time::Timestamp;
use crate::validate::{Fields, optional_enum, optional_id, problem};

pub fn router() -> ApiRouter {
    ApiRouter::new().route(Scope::AuditRead, routes!(list_entries))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AuditQuery {
    /// `limit`, `offset`, `after`: documented by `ListRequest`.
    #[serde(flatten)]
    #[param(ignore)]
    page: ListRequest,
    /// The actor's id (a user's or a key's).
    #[param(value_type = Option<uuid::Uuid>)]
    actor: Option<String>,
    #[param(schema_with = action_names)]
    action: Option<String>,
    #[param(schema_with = target_types)]
    target_type: Option<String>,
    #[param(value_type = Option<uuid::Uuid>)]
    target_id: Option<String>,
    /// Entries written at or after this instant (RFC 3339).
    #[param(value_type = Option<String>, format = DateTime)]
    from: Option<String>,
    /// Entries written before this instant (RFC 3339).
    #[param(value_type = Option<String>, format = DateTime)]
    to: Option<String>,
}

fn action_names() -> utoipa::openapi::ObjectBuilder {
    schema::enum_of(Action::NAMES)
}

fn target_types() -> utoipa::openapi::ObjectBuilder {
    schema::enum_of(TargetType::NAMES)
}

/// `?from=` and `?to=`: an RFC 3339 instant.
fn instant(field: &str, value: Option<&str>) -> Result<Option<Timestamp>, FieldError> {
    let Some(text) = value.filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let at = chrono::DateTime::parse_from_rfc3339(text)
        .map_err(|_| {
            problem(
                field,
                "must be an RFC 3339 instant, e.g. 2026-11-24T09:00:00Z",
            )
        })?
        .with_timezone(&chrono::Utc);
    if at < crate::reports::routes::earliest() || at > crate::reports::routes::latest() {
        return Err(problem(field, "must be between 1970-01-01 and 9999-12-31"));
    }
    Ok(Some(Timestamp::from_datetime(at)))
}

fn format_of(headers: &HeaderMap) -> Format {
    let accept = headers
        .get(axum::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if accept.contains("text/csv") {
        Format::Csv
    } else if accept.contains("application/x-ndjson") {
        Format::Ndjson
    } else {
        Format::Page
    }
}

/// List the audit log
#[utoipa::path(get, path = "/audit-log", operation_id = "list_audit_log", tag = "Audit log",
    params(AuditQuery, ListRequest),
    responses(
        (status = 200, description = "A page of entries, newest first (JSON); with `Accept: \
            text/csv` or `application/x-ndjson`, every matching entry, newest first, one CSV \
            row or JSON line each", content(
            (CursorPage<Entry> = "application/json"),
            (String = "text/csv"),
            (String = "application/x-ndjson"),
        )),
    ))]
async fn list_entries(
    State(db): State<Db>,
    State(cursors): State<Arc<Cursors>>,
    principal: Principal,
    headers: HeaderMap,
    Query(query): Query<AuditQuery>,
) -> ApiResult<Response> {
    let ((page, after), actor, action, target_type, target_id, from, to) = (
        query.page.check(50, 200),
        optional_id("actor", query.actor.as_deref().filter(|t| !t.is_empty())),
        optional_enum::<Action>("action", query.action.as_deref().filter(|t| !t.is_empty())),
        optional_enum::<TargetType>(
            "targetType",
            query.target_type.as_deref().filter(|t| !t.is_empty()),
        ),
        optional_id(
            "targetId",
            query.target_id.as_deref().filter(|t| !t.is_empty()),
        ),
        instant("from", query.from.as_deref()),
        instant("to", query.to.as_deref()),
    )
        .all_valid()?;
    let filters = Filters {
        actor,
        action,
        target_type,
        target_id,
        from,
        to,
        seen_by: principal.tenant.visibility,
    };
    let company_id = principal.tenant.company_id;
    let format = format_of(&headers);
    if format != Format::Page {
        return Ok(super::export::stream(
            db.clone(),
            company_id,
            filters,
            format,
        ));
    }
    let list_id = ListId::new("audit_log", &principal.tenant, &format!("{filters:?}"));
    let after = cursors.open_after(&list_id, after.as_deref())?;
    let rows = list::page(
        &db,
        company_id,
        &filters,
        after.as_ref(),
        page.limit + 1,
        page.offset,
    )
    .await?;
    let total = list::total(&db, company_id, &filters).await?;
    let position = |entry: &Entry| After {
        created_at: entry.at,
        id: entry.id,
    };
    Ok(Json(CursorPage::by_time(
        rows, total, page, &cursors, &list_id, position,
    ))
    .into_response())
}
