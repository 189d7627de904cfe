//! `GET /reports/tickets?entityId&from&to&tag&anyTag&cf.<key>`.

use std::sync::Arc;

use axum::extract::{RawQuery, State};
use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use serde::Deserialize;
use utoipa_axum::routes;

use super::model::{DEFAULT_DAYS, MAX_DAYS, ReportQuery, TicketReport};
use super::store;
use crate::auth::{Principal, Scope};
use crate::custom_fields::DefinitionCache;
use crate::custom_fields::model::{RecordKind, field_filter};
use crate::custom_fields::routes::definitions_for_filters;
use crate::db::Db;
use crate::error::{ApiResult, FieldError};
use crate::extract::{Json, Query};
use crate::router::ApiRouter;
use crate::tags::model::tag_filter;
use crate::time::{Clock, Timestamp};
use crate::validate::{Fields, optional_id, problem};

pub fn router() -> ApiRouter {
    ApiRouter::new().route(Scope::ReportsRead, routes!(tickets))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct ReportParams {
    #[param(value_type = Option<uuid::Uuid>)]
    entity_id: Option<String>,
    /// A date (YYYY-MM-DD, from its start) or an RFC 3339 time; default `to` minus 30 days.
    #[param(value_type = Option<String>)]
    from: Option<String>,
    /// A date (YYYY-MM-DD, to its end) or an RFC 3339 time; default now. At most 366 days after `from`.
    #[param(value_type = Option<String>)]
    to: Option<String>,
}

/// Ticket report
///
/// Counts by status and priority, tickets created and resolved per day,
/// time to resolution, escalations, satisfaction ratings (CSAT).
#[utoipa::path(get, path = "/reports/tickets", operation_id = "ticket_report", tag = "Reports",
    params(ReportParams,
        ("tag" = Option<Vec<String>>, Query, explode = true,
            description = "Only tickets carrying every one of these tags (repeat the \
                           parameter or separate with commas), as on `GET /tickets`"),
        ("anyTag" = Option<String>, Query,
            description = "Only tickets carrying at least one of these comma-separated tags"),
        ("cf.{key}" = Option<String>, Query,
            description = "Only tickets whose custom field `key` equals this (a multiselect: \
                           contains it); `cf.{key}[gt|gte|lt|lte]` compares numbers, dates and \
                           datetimes, as on `GET /tickets`")),
    responses((status = 200, description = "The report", body = TicketReport)))]
async fn tickets(
    State(db): State<Db>,
    State(clock): State<Clock>,
    State(definitions_cache): State<Arc<DefinitionCache>>,
    principal: Principal,
    Query(params): Query<ReportParams>,
    RawQuery(raw_query): RawQuery,
) -> ApiResult<Json<TicketReport>> {
    let definitions =
        definitions_for_filters(&definitions_cache, &db, &principal, raw_query.as_deref()).await?;
    let (entity_id, tags, fields, (from, to)) = (
        optional_id("entityId", params.entity_id.as_deref()),
        tag_filter(raw_query.as_deref()),
        field_filter(raw_query.as_deref(), &definitions, RecordKind::Ticket),
        period(params.from.as_deref(), params.to.as_deref(), clock.now()),
    )
        .all_valid()?;
    let query = ReportQuery {
        entity_id,
        tags,
        fields,
        from,
        to,
    };
    Ok(Json(
        store::ticket_report(&db, &principal.tenant, &query).await?,
    ))
}

/// Which end of the period a parameter gives: a date means the start of
/// that day for `from`, and the end of it (the next day's start) for `to`.
#[derive(Clone, Copy)]
pub(crate) enum Edge {
    Start,
    End,
}

/// The earliest and latest instants a bound may name: the stores compare
/// four-digit-year timestamps, and arithmetic on the period must not
/// overflow the calendar's range.
pub(crate) fn earliest() -> DateTime<Utc> {
    DateTime::UNIX_EPOCH
}

pub(crate) fn latest() -> DateTime<Utc> {
    NaiveDate::from_ymd_opt(9999, 12, 31)
        .and_then(|d| d.and_hms_milli_opt(23, 59, 59, 999))
        .expect("9999-12-31T23:59:59.999 is a valid time")
        .and_utc()
}

/// `YYYY-MM-DD` (a UTC day) or an RFC 3339 timestamp, in 1970–9999 (UTC);
/// empty is absent.
pub(crate) fn bound(
    field: &str,
    raw: Option<&str>,
    edge: Edge,
) -> Result<Option<Timestamp>, FieldError> {
    let Some(raw) = raw.map(str::trim).filter(|r| !r.is_empty()) else {
        return Ok(None);
    };
    let given = if let Ok(date) = NaiveDate::parse_from_str(raw, "%Y-%m-%d") {
        date.and_hms_opt(0, 0, 0)
            .map(|start| (start.and_utc(), true))
    } else {
        DateTime::parse_from_rfc3339(raw)
            .ok()
            .map(|at| (at.with_timezone(&Utc), false))
    };
    let Some((at, is_date)) = given else {
        return Err(problem(
            field,
            "must be a date (YYYY-MM-DD) or an RFC 3339 timestamp (2026-03-01T00:00:00Z)",
        ));
    };
    if at < earliest() || at > latest() {
        return Err(problem(field, "must be between 1970-01-01 and 9999-12-31"));
    }
    let at = match edge {
        // The end of the last representable day is its last millisecond.
        Edge::End if is_date => (at + TimeDelta::days(1)).min(latest()),
        _ => at,
    };
    Ok(Some(Timestamp::from_datetime(at)))
}

/// The period `(from, to)` from the parameters: `to` defaults to now,
/// `from` to 30 days before `to`; `from` must come before `to`, at most 366
/// days apart.
fn period(
    from: Option<&str>,
    to: Option<&str>,
    now: Timestamp,
) -> Result<(Timestamp, Timestamp), Vec<FieldError>> {
    let (from, to) =
        (bound("from", from, Edge::Start), bound("to", to, Edge::End)).collect_errors()?;
    let to = to.unwrap_or(now);
    let from = from.unwrap_or_else(|| {
        Timestamp::from_datetime((to.0 - TimeDelta::days(DEFAULT_DAYS)).max(earliest()))
    });
    if from >= to {
        return Err(vec![problem(
            "from",
            "must be before to (which defaults to now)",
        )]);
    }
    if to.0 - from.0 > TimeDelta::days(MAX_DAYS) {
        return Err(vec![problem(
            "from",
            format!("the period must not exceed {MAX_DAYS} days"),
        )]);
    }
    Ok((from, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &str, edge: Edge) -> Result<Option<Timestamp>, FieldError> {
        bound("from", Some(raw), edge)
    }

    #[test]
    fn dates_cover_whole_days() {
        let start = parse("2026-03-02", Edge::Start)
            .ok()
            .flatten()
            .expect("date");
        let end = parse("2026-03-02", Edge::End).ok().flatten().expect("date");
        assert_eq!(start.to_rfc3339(), "2026-03-02T00:00:00.000Z");
        assert_eq!(end.to_rfc3339(), "2026-03-03T00:00:00.000Z");
        let at = parse("2026-03-02T10:30:00+02:00", Edge::End)
            .ok()
            .flatten()
            .expect("timestamp");
        assert_eq!(at.to_rfc3339(), "2026-03-02T08:30:00.000Z");
        assert_eq!(parse("", Edge::Start), Ok(None));
        assert!(parse("yesterday", Edge::Start).is_err());
        assert!(parse("2026-02-30", Edge::Start).is_err());
    }

    #[test]
    fn periods_default_and_are_bounded() {
        let now = Timestamp::now();
        let (from, to) = period(None, None, now).expect("default");
        assert_eq!(to, now);
        assert_eq!((to.0 - from.0).num_days(), 30);
        let long = (now.0 - TimeDelta::days(400)).to_rfc3339();
        assert!(period(Some(&long), None, now).is_err());
        let later = now.plus(std::time::Duration::from_secs(60)).to_rfc3339();
        assert!(period(Some(&later), None, now).is_err());
    }
}
