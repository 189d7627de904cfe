//! `GET /tickets`: the list's filters (entity, status, priority, assignee,
//! team, tags, custom fields, SLA state), its full-text search and its
//! orders, parsed into a `TicketFilter` for the store.

use axum::extract::{RawQuery, State};
use serde::Deserialize;
use utoipa::IntoParams;

use super::TicketReads;
use super::model::{Ticket, TicketFilter, TicketSearch};
use super::store;
use crate::auth::Principal;
use crate::custom_fields::model::{RecordKind, field_filter};
use crate::custom_fields::routes::definitions_for_filters;
use crate::error::{ApiError, ApiResult, ErrorCode, FieldError};
use crate::extract::{Json, Query};
use crate::openapi::schema;
use crate::paging::{After, CursorPage, ListId, ListRequest, refuse_after_in_rank_order};
use crate::query_params::TicketLabelFilters;
use crate::search;
use crate::tags::model::tag_filter;
use crate::time::Timestamp;
use crate::validate::{Fields, Page, optional_enum, optional_id, problem};

/// GET /tickets: default and maximum page size (docs/api.md, "Tickets").
pub(crate) const LIST_DEFAULT: i64 = 20;
pub(crate) const LIST_MAX: i64 = 100;

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct ListQuery {
    /// Only the ticket with this number (`TKT-000042`; the prefix is
    /// optional and any case, leading zeros may be left out): a list of
    /// that one ticket, or an empty one.
    #[param(value_type = Option<String>, max_length = 30, example = "TKT-000042")]
    ticket_number: Option<String>,
    #[param(value_type = Option<uuid::Uuid>)]
    entity_id: Option<String>,
    #[param(schema_with = schema::ticket_status)]
    status: Option<String>,
    #[param(schema_with = schema::ticket_priority)]
    priority: Option<String>,
    #[param(value_type = Option<uuid::Uuid>)]
    assigned_to_id: Option<String>,
    /// `false`: only unassigned tickets; `true`: only assigned ones.
    #[param(value_type = Option<bool>)]
    assigned: Option<String>,
    /// Only the tickets of this team.
    #[param(value_type = Option<uuid::Uuid>)]
    team_id: Option<String>,
    /// Full-text search: ranks matches by subject, then description, then
    /// public comments; internal notes are searched only for keys holding
    /// `tickets:write`. Every word must match (stemmed), the last one also
    /// as a prefix; punctuation and operators are ignored. Results come
    /// best match first, then newest. Blank means no search.
    #[param(max_length = 500)]
    q: Option<String>,
    /// `true`: only tickets with an SLA breach; `false`: only tickets
    /// without one.
    #[param(value_type = Option<bool>)]
    sla_breached: Option<String>,
    /// Only tickets with a running SLA clock (first response, next
    /// response or resolution) due before this instant (RFC 3339).
    #[param(value_type = Option<chrono::DateTime<chrono::Utc>>)]
    sla_due_before: Option<String>,
    /// `newest` (default) or `sla_due`: the soonest running SLA due time
    /// first, tickets without one last (pages by offset, like a search).
    #[param(schema_with = order_schema)]
    order: Option<String>,
    /// `true`: only tickets snoozed until a time still to come; `false`:
    /// only tickets awake (the open view). Absent: both.
    #[param(value_type = Option<bool>)]
    snoozed: Option<String>,
    /// `limit`, `offset`, `after`: documented by `ListRequest`.
    #[serde(flatten)]
    #[param(ignore)]
    page: ListRequest,
}

fn order_schema() -> utoipa::openapi::ObjectBuilder {
    schema::enum_of(&["newest", "sla_due"])
}

/// `?slaBreached=true|false`.
fn optional_bool(field: &str, value: Option<&str>) -> Result<Option<bool>, FieldError> {
    match value {
        None => Ok(None),
        Some("true") => Ok(Some(true)),
        Some("false") => Ok(Some(false)),
        Some(_) => Err(problem(field, "must be true or false")),
    }
}

/// `?slaDueBefore=<RFC 3339 instant>`.
fn optional_instant(field: &str, value: Option<&str>) -> Result<Option<Timestamp>, FieldError> {
    let Some(text) = value else {
        return Ok(None);
    };
    let at = chrono::DateTime::parse_from_rfc3339(text).map_err(|_| {
        problem(
            field,
            "must be an RFC 3339 instant, e.g. 2026-11-24T09:00:00Z",
        )
    })?;
    // The range every date parameter of the API accepts.
    let at = at.with_timezone(&chrono::Utc);
    if at < crate::reports::routes::earliest() || at > crate::reports::routes::latest() {
        return Err(problem(field, "must be between 1970-01-01 and 9999-12-31"));
    }
    Ok(Some(Timestamp::from_datetime(at)))
}

/// `?ticketNumber=TKT-000042` (or `tkt-42`, or `42`): the sequence value.
fn optional_number(value: Option<&str>) -> Result<Option<i64>, FieldError> {
    let Some(text) = value.map(str::trim) else {
        return Ok(None);
    };
    let digits = match text.get(..4) {
        Some(prefix) if prefix.eq_ignore_ascii_case("TKT-") => &text[4..],
        _ => text,
    };
    let number = digits
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| digits.parse::<i64>().ok())
        .flatten()
        .filter(|n| *n > 0);
    number
        .map(Some)
        .ok_or_else(|| problem("ticketNumber", "must be a ticket number, e.g. TKT-000042"))
}

/// `?order=newest|sla_due`: whether the soonest SLA due time comes first.
fn by_sla_due(value: Option<&str>) -> Result<bool, FieldError> {
    match value {
        None | Some("newest") => Ok(false),
        Some("sla_due") => Ok(true),
        Some(_) => Err(problem("order", "must be newest or sla_due")),
    }
}

/// List tickets
///
/// Newest first; filters combine. An empty filter value means no filter.
/// With `q`, only matching tickets, best match first, then newest.
#[utoipa::path(get, path = "/tickets", operation_id = "list_tickets", tag = "Tickets",
    params(ListQuery, ListRequest, TicketLabelFilters),
    responses((status = 200, description = "A page of tickets", body = CursorPage<Ticket>)))]
pub(super) async fn list(
    State(state): State<TicketReads>,
    principal: Principal,
    Query(query): Query<ListQuery>,
    RawQuery(raw_query): RawQuery,
) -> ApiResult<Json<CursorPage<Ticket>>> {
    let paging = query.page.check(LIST_DEFAULT, LIST_MAX);
    let filter = filter_of(&state, &principal, &query, raw_query.as_deref()).await;
    // One 400 lists the paging's problems and the filters' together.
    let ((page, after), filter) = match (paging, filter) {
        (Ok(paging), Ok(filter)) => (paging, filter),
        (Err(mut problems), Err(error)) if error.code == ErrorCode::ValidationFailed => {
            problems.extend(error.details);
            return Err(ApiError::validation(problems));
        }
        (Err(problems), _) => return Err(ApiError::validation(problems)),
        (Ok(_), Err(error)) => return Err(error),
    };
    let page = page_of(&state, &principal, "tickets", filter, page, after).await?;
    Ok(Json(page))
}

/// The list's filters and order (every parameter of `query` but paging,
/// with the tags and custom fields of `raw_query`) as the store takes
/// them; every problem in one 400. A saved view's filters are checked and
/// read through this too.
pub(crate) async fn filter_of(
    state: &TicketReads,
    principal: &Principal,
    query: &ListQuery,
    raw_query: Option<&str>,
) -> ApiResult<TicketFilter> {
    let definitions =
        definitions_for_filters(&state.field_definitions, &state.db, principal, raw_query).await?;
    let (entity_id, status, priority, assigned_to_id, team_id, tags, text, custom_fields) = (
        optional_id("entityId", query.entity_id.as_deref()),
        optional_enum("status", non_empty(&query.status)),
        optional_enum("priority", non_empty(&query.priority)),
        optional_id("assignedToId", query.assigned_to_id.as_deref()),
        optional_id("teamId", query.team_id.as_deref()),
        tag_filter(raw_query),
        search::optional_query(query.q.as_deref()),
        field_filter(raw_query, &definitions, RecordKind::Ticket),
    )
        .all_valid()?;
    let (number, sla_breached, sla_due_before, by_sla_due, snoozed, assigned) = (
        optional_number(non_empty(&query.ticket_number)),
        optional_bool("slaBreached", non_empty(&query.sla_breached)),
        optional_instant("slaDueBefore", non_empty(&query.sla_due_before)),
        by_sla_due(non_empty(&query.order)),
        optional_bool("snoozed", non_empty(&query.snoozed)),
        optional_bool("assigned", non_empty(&query.assigned)),
    )
        .all_valid()?;
    let search = text.map(|text| TicketSearch {
        text,
        include_internal: principal.reads_internal_notes(),
    });
    Ok(TicketFilter {
        number,
        entity_id,
        status,
        priority,
        assigned_to_id,
        assigned,
        team_id,
        tags,
        search,
        custom_fields,
        sla_breached,
        sla_due_before,
        by_sla_due,
        snoozed: snoozed.map(|snoozed| crate::tickets::model::SnoozedAt {
            snoozed,
            now: state.clock.now(),
        }),
    })
}

/// The page `page` (or the one `after` a cursor) of the tickets `filter` selects; `name`
/// names the list its cursors belong to.
pub(crate) async fn page_of(
    state: &TicketReads,
    principal: &Principal,
    name: &'static str,
    filter: TicketFilter,
    page: Page,
    after: Option<String>,
) -> ApiResult<CursorPage<Ticket>> {
    let list = ListId::new(name, &principal.tenant, &filter);
    // Like a search's rank, an SLA due time is no position a cursor holds.
    let searching = filter.search.is_some() || filter.by_sla_due;
    let after = refuse_after_in_rank_order(searching, after)?;
    let after = state.cursors.open_after(&list, after.as_deref())?;
    let (tickets, total) = store::list(
        &state.db,
        &principal.tenant,
        &filter,
        page,
        after.as_ref(),
        &state.link_signer(),
    )
    .await?;
    let page = CursorPage::by_time(tickets, total, page, &state.cursors, &list, |t| After {
        created_at: t.created_at,
        id: t.id,
    });
    Ok(page.ranked(searching))
}

/// A query parameter given empty (`?status=`) counts as absent.
fn non_empty(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|v| !v.is_empty())
}
