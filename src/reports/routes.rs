//! `GET /reports/tickets?entityId&from&to`.

use axum::extract::State;
use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use serde::Deserialize;
use utoipa_axum::routes;

use super::model::{DEFAULT_DAYS, MAX_DAYS, ReportQuery, TicketReport};
use super::store;
use crate::auth::{Principal, Scope};
use crate::error::ApiResult;
use crate::extract::{Json, Query};
use crate::router::ApiRouter;
use crate::state::AppState;
use crate::time::Timestamp;
use crate::validate::Validator;

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
/// time to resolution, escalations.
#[utoipa::path(get, path = "/reports/tickets", operation_id = "ticket_report", tag = "Reports",
    params(ReportParams),
    responses((status = 200, description = "The report", body = TicketReport)))]
async fn tickets(
    State(state): State<AppState>,
    principal: Principal,
    Query(params): Query<ReportParams>,
) -> ApiResult<Json<TicketReport>> {
    let mut v = Validator::new();
    let entity_id = v.uuid("entityId", params.entity_id.as_deref());
    let from = bound(&mut v, "from", params.from.as_deref(), Edge::Start);
    let to = bound(&mut v, "to", params.to.as_deref(), Edge::End);
    let query = period(&mut v, entity_id, from, to, Timestamp::now());
    v.finish()?;
    let Some(query) = query else {
        return Err(crate::error::ApiError::internal());
    };
    Ok(Json(
        store::ticket_report(&state.db, &principal.tenant, &query).await?,
    ))
}

/// Which end of the period a parameter gives: a date means the start of
/// that day for `from`, and the end of it (the next day's start) for `to`.
#[derive(Clone, Copy)]
enum Edge {
    Start,
    End,
}

/// `YYYY-MM-DD` (a UTC day) or an RFC 3339 timestamp; empty is absent.
/// `Some(None)` is absent, `None` is invalid.
fn bound(
    v: &mut Validator,
    field: &str,
    raw: Option<&str>,
    edge: Edge,
) -> Option<Option<Timestamp>> {
    let Some(raw) = raw.map(str::trim).filter(|r| !r.is_empty()) else {
        return Some(None);
    };
    if let Ok(date) = NaiveDate::parse_from_str(raw, "%Y-%m-%d") {
        let day = match edge {
            Edge::Start => Some(date),
            Edge::End => date.succ_opt(),
        };
        if let Some(start) = day.and_then(|d| d.and_hms_opt(0, 0, 0)) {
            return Some(Some(Timestamp::from_datetime(start.and_utc())));
        }
    }
    if let Ok(at) = DateTime::parse_from_rfc3339(raw) {
        return Some(Some(Timestamp::from_datetime(at.with_timezone(&Utc))));
    }
    v.add(
        field,
        "must be a date (YYYY-MM-DD) or an RFC 3339 timestamp (2026-03-01T00:00:00Z)",
    );
    None
}

/// The period from the parameters: `to` defaults to now, `from` to 30 days
/// before `to`; `from` must come before `to`, at most 366 days apart.
fn period(
    v: &mut Validator,
    entity_id: Option<uuid::Uuid>,
    from: Option<Option<Timestamp>>,
    to: Option<Option<Timestamp>>,
    now: Timestamp,
) -> Option<ReportQuery> {
    let (from, to) = (from?, to?);
    let to = to.unwrap_or(now);
    let from =
        from.unwrap_or_else(|| Timestamp::from_datetime(to.0 - TimeDelta::days(DEFAULT_DAYS)));
    if from >= to {
        v.add("from", "must be before to (which defaults to now)");
        return None;
    }
    if to.0 - from.0 > TimeDelta::days(MAX_DAYS) {
        v.add(
            "from",
            format!("the period must not exceed {MAX_DAYS} days"),
        );
        return None;
    }
    Some(ReportQuery {
        entity_id,
        from,
        to,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &str, edge: Edge) -> Option<Option<Timestamp>> {
        bound(&mut Validator::new(), "from", Some(raw), edge)
    }

    #[test]
    fn dates_cover_whole_days() {
        let start = parse("2026-03-02", Edge::Start).flatten().expect("date");
        let end = parse("2026-03-02", Edge::End).flatten().expect("date");
        assert_eq!(start.to_rfc3339(), "2026-03-02T00:00:00.000Z");
        assert_eq!(end.to_rfc3339(), "2026-03-03T00:00:00.000Z");
        let at = parse("2026-03-02T10:30:00+02:00", Edge::End)
            .flatten()
            .expect("timestamp");
        assert_eq!(at.to_rfc3339(), "2026-03-02T08:30:00.000Z");
        assert_eq!(parse("", Edge::Start), Some(None));
        assert_eq!(parse("yesterday", Edge::Start), None);
        assert_eq!(parse("2026-02-30", Edge::Start), None);
    }

    #[test]
    fn periods_default_and_are_bounded() {
        let now = Timestamp::now();
        let mut v = Validator::new();
        let default = period(&mut v, None, Some(None), Some(None), now).expect("default");
        assert_eq!(default.to, now);
        assert_eq!((default.to.0 - default.from.0).num_days(), 30);
        let long = Some(Some(Timestamp::from_datetime(now.0 - TimeDelta::days(400))));
        assert!(period(&mut v, None, long, Some(None), now).is_none());
        let later = Some(Some(now.plus(std::time::Duration::from_secs(60))));
        assert!(period(&mut v, None, later, Some(None), now).is_none());
        assert!(v.has_errors());
    }
}
