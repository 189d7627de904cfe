//! Business-hours calendars and SLA policies as the API shows them and the
//! store keeps them, and the step from a stored calendar to `Hours`.

use std::collections::BTreeSet;

use chrono::NaiveDate;
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::calendar::{Calendar, Hours, Opening, WEEKDAYS, parse_clock};
use crate::time::Timestamp;
use vocab::ticket::{Priority, TicketStatus};

/// At most this many calendars per company and mode.
pub const MAX_CALENDARS: usize = 50;
/// At most this many weekly intervals in one calendar (ten a day).
pub const MAX_INTERVALS: usize = 70;
/// At most this many holidays in one calendar (a few years' worth).
pub const MAX_HOLIDAYS: usize = 1000;
/// At most this many policies per company and mode.
pub const MAX_POLICIES: usize = 100;
/// The largest target or warning: a year of business minutes.
pub const TARGET_MINUTES_MAX: i64 = 366 * 24 * 60;
/// `sla.warning` fires this many business minutes before a due time
/// unless the policy says otherwise.
pub const DEFAULT_WARN_MINUTES: i64 = 15;

/// A business-hours calendar.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BusinessHours {
    pub id: Uuid,
    pub name: String,
    /// IANA name, resolved with the tz database (DST included).
    pub timezone: String,
    /// Sorted by day, then opening time.
    pub weekly: Vec<WeeklyInterval>,
    /// Local dates (`YYYY-MM-DD`), sorted; no interval opens on them.
    #[schema(value_type = Vec<String>)]
    pub holidays: Vec<NaiveDate>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// One weekly opening, local time. `close` at or before `open` crosses
/// midnight: the interval ends the next day and belongs to `day`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct WeeklyInterval {
    /// `mon` … `sun`.
    #[schema(schema_with = weekday_schema)]
    pub day: String,
    /// `HH:MM`, 00:00–23:59.
    #[schema(pattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$")]
    pub open: String,
    /// `HH:MM`, 00:00–24:00.
    #[schema(pattern = "^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$")]
    pub close: String,
}

fn weekday_schema() -> utoipa::openapi::ObjectBuilder {
    infra::schema::enum_of(&WEEKDAYS)
}

/// A calendar as written: validated, normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalendarInput {
    pub name: String,
    pub timezone: String,
    pub weekly: Vec<WeeklyInterval>,
    pub holidays: Vec<NaiveDate>,
}

impl BusinessHours {
    /// The calendar to compute with; `None` only for a stored value that no
    /// longer parses (a time zone the tz database dropped).
    pub fn hours(&self) -> Option<Hours> {
        let tz: Tz = self.timezone.parse().ok()?;
        let openings: Option<Vec<Opening>> = self.weekly.iter().map(opening).collect();
        let holidays: BTreeSet<NaiveDate> = self.holidays.iter().copied().collect();
        Calendar::new(tz, &openings?, holidays).map(Hours::Calendar)
    }
}

/// The opening of a (validated) weekly interval.
pub fn opening(interval: &WeeklyInterval) -> Option<Opening> {
    let weekday = WEEKDAYS.iter().position(|d| *d == interval.day)?;
    Some(Opening {
        weekday: u32::try_from(weekday).ok()?,
        open: parse_clock(&interval.open, false)?,
        close: parse_clock(&interval.close, true)?,
    })
}

/// An SLA policy. The first enabled policy, in list order, whose
/// conditions a ticket meets is the ticket's policy.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[schema(as = SlaPolicy)]
#[serde(rename_all = "camelCase")]
pub struct Policy {
    pub id: Uuid,
    pub name: String,
    pub enabled: bool,
    pub conditions: PolicyConditions,
    pub targets: TargetsByPriority,
    /// `null`: the clocks run around the clock.
    pub business_hours_id: Option<Uuid>,
    /// Statuses that pause the resolution clock.
    #[schema(value_type = Vec<String>)]
    pub pause_on: Vec<TicketStatus>,
    /// Business minutes before a due time at which `sla.warning` fires.
    pub warn_minutes: i64,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// What a ticket must meet, all together; `None` is "any", so a policy
/// without conditions matches every ticket (a catch-all, last in the list).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[schema(as = SlaConditions)]
#[serde(rename_all = "camelCase")]
pub struct PolicyConditions {
    #[schema(value_type = Option<Vec<String>>)]
    pub priorities: Option<Vec<Priority>>,
    pub entity_id: Option<Uuid>,
    /// A team of the company and mode (checked on save); meets only tickets
    /// of that team.
    pub team_id: Option<Uuid>,
    /// The ticket carries every one of these tags (normalised, sorted).
    pub tags: Option<Vec<String>>,
    /// As the `cf.` list filters: `{"plan": {"eq": "pro"}}`.
    #[schema(value_type = Option<Object>)]
    pub custom_fields: Option<serde_json::Value>,
}

/// Targets per priority; a priority left out has no targets (its tickets
/// get no due times from this policy).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[schema(as = SlaTargetsByPriority)]
pub struct TargetsByPriority {
    #[serde(rename = "LOW", default, skip_serializing_if = "Option::is_none")]
    pub low: Option<Targets>,
    #[serde(rename = "MEDIUM", default, skip_serializing_if = "Option::is_none")]
    pub medium: Option<Targets>,
    #[serde(rename = "HIGH", default, skip_serializing_if = "Option::is_none")]
    pub high: Option<Targets>,
    #[serde(rename = "URGENT", default, skip_serializing_if = "Option::is_none")]
    pub urgent: Option<Targets>,
}

impl TargetsByPriority {
    pub fn get(&self, priority: Priority) -> Option<&Targets> {
        match priority {
            Priority::Low => self.low.as_ref(),
            Priority::Medium => self.medium.as_ref(),
            Priority::High => self.high.as_ref(),
            Priority::Urgent => self.urgent.as_ref(),
        }
    }

    pub fn slot(&mut self, priority: Priority) -> &mut Option<Targets> {
        match priority {
            Priority::Low => &mut self.low,
            Priority::Medium => &mut self.medium,
            Priority::High => &mut self.high,
            Priority::Urgent => &mut self.urgent,
        }
    }
}

/// Business minutes per metric; `None`: the metric is not measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[schema(as = SlaTargets)]
#[serde(rename_all = "camelCase")]
pub struct Targets {
    pub first_response_minutes: Option<i64>,
    pub next_response_minutes: Option<i64>,
    pub resolution_minutes: Option<i64>,
}

/// A policy as written: validated; `id` keeps an existing policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyInput {
    pub id: Option<Uuid>,
    pub name: String,
    pub enabled: bool,
    pub conditions: PolicyConditions,
    pub targets: TargetsByPriority,
    pub business_hours_id: Option<Uuid>,
    pub pause_on: Vec<TicketStatus>,
    pub warn_minutes: i64,
}

impl PolicyInput {
    /// Whether storing `self` over `old` changes anything.
    pub fn differs_from(&self, old: &Policy) -> bool {
        self.name != old.name
            || self.enabled != old.enabled
            || self.conditions != old.conditions
            || self.targets != old.targets
            || self.business_hours_id != old.business_hours_id
            || self.pause_on != old.pause_on
            || self.warn_minutes != old.warn_minutes
    }
}
