//! What the ticket report holds, and the pure rules about periods.

use chrono::{NaiveDate, TimeDelta};
use serde::Serialize;
use uuid::Uuid;

use crate::custom_fields::model::FieldFilter;
use crate::tags::model::TagFilter;
use crate::tickets::model::{Priority, TicketStatus};
use crate::time::Timestamp;

/// The longest period a report covers (so `daily` stays bounded).
pub const MAX_DAYS: i64 = 366;
/// The period when none is given: the last 30 days.
pub const DEFAULT_DAYS: i64 = 30;
/// The percentiles of time to resolution.
pub const MEDIAN: f64 = 0.5;
pub const P90: f64 = 0.9;

/// Which tickets a report covers: the tenant's (optionally one entity's,
/// optionally only those the tag and custom field filters select), over
/// `[from, to)`.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportQuery {
    pub entity_id: Option<Uuid>,
    pub tags: TagFilter,
    pub fields: FieldFilter,
    pub from: Timestamp,
    pub to: Timestamp,
}

impl ReportQuery {
    /// Every UTC day that `[from, to)` touches, in order.
    pub fn days(&self) -> Vec<NaiveDate> {
        let first = self.from.0.date_naive();
        let last = (self.to.0 - TimeDelta::milliseconds(1)).date_naive();
        first.iter_days().take_while(|d| *d <= last).collect()
    }
}

#[derive(Debug, Clone, Serialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TicketReport {
    pub from: Timestamp,
    pub to: Timestamp,
    pub entity_id: Option<Uuid>,
    pub tickets: TicketCounts,
    pub daily: Vec<Day>,
    pub resolution_time: ResolutionTime,
    pub escalations: Escalations,
    pub sla: SlaReport,
    /// Satisfaction ratings (of chats and tickets) first submitted in the
    /// period, of the entity when one is given; the tag and custom field
    /// filters do not apply to them.
    pub csat: crate::csat::model::CsatSummary,
}

/// SLA achievement of the tickets created in the period.
#[derive(Debug, Clone, Default, Serialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlaReport {
    /// One row per metric and priority that has a met or breached target,
    /// by metric (`firstResponse`, `nextResponse`, `resolution`) then
    /// priority.
    pub achievement: Vec<SlaAchievement>,
    /// Business minutes to the first response of the tickets whose first
    /// response was met or came late.
    pub first_response: FirstResponseTime,
}

/// Met: the target was reached in time; breached: it was not (whether or
/// not it was reached later). Targets still running count in neither.
#[derive(Debug, Clone, Serialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlaAchievement {
    pub metric: &'static str,
    #[schema(schema_with = crate::openapi::schema::ticket_priority)]
    pub priority: Priority,
    pub met: i64,
    pub breached: i64,
    /// `met / (met + breached)` in percent, to one decimal.
    pub percent_met: f64,
}

/// Percentiles by linear interpolation between the nearest ranks, in
/// business minutes to one decimal; null without a first response.
#[derive(Debug, Clone, Default, Serialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FirstResponseTime {
    pub count: i64,
    pub median_business_minutes: Option<f64>,
    pub p90_business_minutes: Option<f64>,
}

/// The `p` percentile of sorted `values` by linear interpolation between
/// the nearest ranks (what Postgres `percentile_cont` computes).
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let position = p * last as f64;
    let k = position.floor() as usize;
    let low = *sorted.get(k)?;
    let high = *sorted.get((k + 1).min(last))?;
    Some(low + (high - low) * (position - k as f64))
}

/// A value rounded to one decimal.
pub fn one_decimal(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

/// Tickets created in the period (by their current status and priority),
/// and tickets resolved in it.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TicketCounts {
    pub created: i64,
    pub resolved: i64,
    pub by_status: ByStatus,
    pub by_priority: ByPriority,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub struct ByStatus {
    pub open: i64,
    pub in_progress: i64,
    /// Waiting on the customer (an addition to the four statuses).
    pub pending: i64,
    pub resolved: i64,
    pub closed: i64,
}

impl ByStatus {
    pub fn add(&mut self, status: TicketStatus, n: i64) {
        match status {
            TicketStatus::Open => self.open += n,
            TicketStatus::InProgress => self.in_progress += n,
            TicketStatus::Pending => self.pending += n,
            TicketStatus::Resolved => self.resolved += n,
            TicketStatus::Closed => self.closed += n,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub struct ByPriority {
    pub low: i64,
    pub medium: i64,
    pub high: i64,
    pub urgent: i64,
}

impl ByPriority {
    pub fn add(&mut self, priority: Priority, n: i64) {
        match priority {
            Priority::Low => self.low += n,
            Priority::Medium => self.medium += n,
            Priority::High => self.high += n,
            Priority::Urgent => self.urgent += n,
        }
    }
}

/// One UTC day: tickets created on it and tickets resolved on it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Day {
    /// `YYYY-MM-DD`.
    pub date: String,
    pub created: i64,
    pub resolved: i64,
}

/// Time from creation to resolution of the tickets resolved in the period:
/// percentiles by linear interpolation between the nearest ranks (what
/// Postgres `percentile_cont` computes), in seconds rounded to the
/// millisecond; null when no ticket was resolved.
#[derive(Debug, Clone, Default, Serialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResolutionTime {
    pub count: i64,
    pub median_seconds: Option<f64>,
    pub p90_seconds: Option<f64>,
}

/// Escalations made in the period, by the API (manual) or by rules.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Escalations {
    pub total: i64,
    pub manual: i64,
    pub automatic: i64,
}

/// Milliseconds (as the database interpolated them) to whole-millisecond
/// seconds.
pub fn ms_to_seconds(ms: f64) -> f64 {
    ms.round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        Timestamp::from_datetime(
            chrono::DateTime::parse_from_rfc3339(text)
                .expect("valid")
                .with_timezone(&chrono::Utc),
        )
    }

    #[test]
    fn days_cover_the_period() {
        let whole = ReportQuery {
            entity_id: None,
            tags: TagFilter::default(),
            fields: FieldFilter::default(),
            from: at("2026-03-02T00:00:00Z"),
            to: at("2026-03-05T00:00:00Z"),
        };
        let days: Vec<String> = whole.days().iter().map(|d| d.to_string()).collect();
        assert_eq!(days, ["2026-03-02", "2026-03-03", "2026-03-04"]);
        let partial = ReportQuery {
            from: at("2026-03-02T23:00:00Z"),
            to: at("2026-03-03T00:00:00.001Z"),
            ..whole
        };
        assert_eq!(partial.days().len(), 2);
    }

    #[test]
    fn percentiles_interpolate_between_ranks() {
        let values = [10.0, 20.0, 30.0, 40.0];
        assert_eq!(percentile(&values, 0.5), Some(25.0));
        assert_eq!(percentile(&values, 0.9).map(one_decimal), Some(37.0));
        assert_eq!(percentile(&[], 0.5), None);
        assert_eq!(percentile(&[7.0], 0.9), Some(7.0));
    }

    #[test]
    fn seconds_are_rounded_to_the_millisecond() {
        assert_eq!(ms_to_seconds(41_039_999.999_999_98), 41_040.0);
        assert_eq!(ms_to_seconds(600_250.0), 600.25);
    }
}
