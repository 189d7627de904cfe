//! Escalation rules ("dashboard workflow settings"): per company and mode,
//! a list of rules, each with conditions on a ticket and the escalation to
//! apply. The service's scheduler evaluates them on every node (one node per pass on
//! Postgres) and escalates each matching ticket exactly as the API does,
//! once per rule and ticket. `/settings/escalation-rules` edits the list.

pub mod store;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::model::{Priority, TicketStatus};
use crate::auth::Tenant;
use crate::custom_fields::model::{
    Definition, FieldFilter, FilterValue, Operator, RecordKind, json_filter,
};
use crate::db::Db;
use crate::error::{FieldError, StoreError};
use crate::tags::model::TagFilter;
use crate::time::Timestamp;

/// At most this many rules per company and mode.
pub const MAX_RULES: usize = 100;
/// The largest `minutesSince…` value: ten years.
pub const MINUTES_MAX: i64 = 10 * 365 * 24 * 60;
/// The statuses a rule applies to when it names none: open work only, so a
/// rule never reopens a resolved or closed ticket unless it says so.
pub const DEFAULT_STATUSES: &[TicketStatus] = &[TicketStatus::Open, TicketStatus::InProgress];

/// One rule as the API shows it and the scheduler reads it.
#[derive(Debug, Clone, Serialize, PartialEq, utoipa::ToSchema)]
#[schema(as = EscalationRule)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    pub id: Uuid,
    pub name: String,
    pub enabled: bool,
    pub conditions: Conditions,
    pub action: Action,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// What a ticket must satisfy, all together; `None` is "any". At least one
/// is set (checked on write).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[schema(as = EscalationConditions)]
#[serde(rename_all = "camelCase")]
pub struct Conditions {
    /// The ticket's priority is one of these.
    #[schema(value_type = Option<Vec<String>>)]
    pub priorities: Option<Vec<Priority>>,
    /// The ticket's status is one of these; `None` means OPEN or IN_PROGRESS.
    #[schema(value_type = Option<Vec<String>>)]
    pub statuses: Option<Vec<TicketStatus>>,
    pub entity_id: Option<Uuid>,
    /// true: nobody is assigned; false: somebody is.
    pub unassigned: Option<bool>,
    /// At least this many minutes since the ticket was created.
    pub minutes_since_created: Option<i64>,
    /// At least this many minutes since its last change or comment
    /// (`updatedAt`).
    pub minutes_since_last_activity: Option<i64>,
    /// The ticket carries every one of these tags (normalised, sorted).
    /// Rules stored before tag conditions existed read as `None`.
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    /// The ticket carries at least one of these tags (normalised, sorted).
    #[serde(default)]
    pub any_tags: Option<Vec<String>>,
    /// The ticket's custom fields satisfy these, as the `cf.` list filters:
    /// `{"plan": {"eq": "pro"}, "order_total": {"gte": 100, "lt": 500}}`.
    /// Kept in this form and checked again against the definitions at every
    /// pass: a condition that no longer fits them (its field deleted, its
    /// type changed) matches no ticket, and the pass logs a warning.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub custom_fields: Option<serde_json::Value>,
}

impl Conditions {
    pub fn is_empty(&self) -> bool {
        *self == Conditions::default()
    }

    /// The tag conditions as the list filters spell them, so a rule and
    /// `GET /tickets?tag=…&anyTag=…` select tickets with the same SQL.
    pub fn tag_filter(&self) -> TagFilter {
        TagFilter {
            all: self.tags.clone().unwrap_or_default(),
            any: self.any_tags.clone().unwrap_or_default(),
        }
    }

    /// The custom field condition as the list filters spell it, checked
    /// against `definitions` (the tenant's, now); `None` when the rule has
    /// none, `Err` when it no longer fits them.
    pub fn field_filter(
        &self,
        definitions: &[Definition],
    ) -> Option<Result<FieldFilter, Vec<FieldError>>> {
        let condition = self.custom_fields.as_ref()?;
        Some(json_filter(
            "customFields",
            condition,
            definitions,
            RecordKind::Ticket,
        ))
    }
}

/// A custom field filter in the form rules store and show:
/// `{key: {operator: value}}`, operators `eq`, `gt`, `gte`, `lt`, `lte`,
/// values as the filter parsed them (numbers as numbers, times in UTC).
pub fn stored_field_condition(filter: &FieldFilter) -> serde_json::Value {
    let mut fields = serde_json::Map::new();
    for condition in &filter.conditions {
        let operator = match condition.operator {
            Operator::Eq => "eq",
            Operator::Gt => "gt",
            Operator::Gte => "gte",
            Operator::Lt => "lt",
            Operator::Lte => "lte",
        };
        let value = match &condition.value {
            FilterValue::Text(text) => serde_json::Value::from(text.clone()),
            // Whole numbers read back as written (100, not 100.0).
            FilterValue::Number(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => {
                serde_json::Value::from(*n as i64)
            }
            FilterValue::Number(n) => serde_json::Value::from(*n),
        };
        if let serde_json::Value::Object(ops) = fields
            .entry(condition.key.clone())
            .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()))
        {
            ops.insert(operator.to_string(), value);
        }
    }
    serde_json::Value::Object(fields)
}

/// The escalation a rule applies.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[schema(as = EscalationAction)]
#[serde(rename_all = "camelCase")]
pub struct Action {
    /// A user of the company (checked on write and before every pass).
    pub escalate_to_id: Option<Uuid>,
    /// A team of the company and mode: the ticket moves into it and, when
    /// no `escalateToId` is given, is unassigned and enters its routing.
    /// At least one of the two targets is given. Absent rather than null
    /// when not set, so rules written before teams read back unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escalate_to_team_id: Option<Uuid>,
    pub reason: Option<String>,
}

/// A rule as written by `PUT /settings/escalation-rules`: `id` keeps an
/// existing rule (and its history of firings), `None` creates one.
#[derive(Debug, Clone)]
pub struct NewRule {
    pub id: Option<Uuid>,
    pub name: String,
    pub enabled: bool,
    pub conditions: Conditions,
    pub action: Action,
}

/// The tenant's rules, in their order.
pub async fn list(db: &Db, tenant: &Tenant) -> Result<Vec<Rule>, StoreError> {
    store::list(db, tenant).await
}

/// Replaces the tenant's list with `rules`, in one transaction: rules whose
/// id is given are updated (and keep their firings), the others created,
/// and rules left out deleted. An id that is not one of the tenant's rules
/// is an invalid reference (`rules[i].id`). Every reference is checked in
/// that transaction: the problems are listed together (`InvalidReferences`).
/// Rules created or changed are stamped `now`.
pub async fn replace(
    db: &Db,
    tenant: &Tenant,
    rules: &[NewRule],
    now: Timestamp,
) -> Result<Vec<Rule>, StoreError> {
    store::replace(db, tenant, rules, now).await
}

/// Every reference in `rules` that `known` does not hold: rule ids,
/// `action.escalateToId` (a user of the company), `action.escalateToTeamId`
/// (a team of the tenant) and
/// `conditions.entityId` (an entity of the company), as 400 details.
fn reference_problems(rules: &[NewRule], known: &store::Known) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut problem = |field: String, message: &str| {
        errors.push(FieldError {
            field,
            message: message.to_string(),
        })
    };
    for (i, rule) in rules.iter().enumerate() {
        if let Some(id) = rule.id
            && !known.rules.contains(&id)
        {
            problem(
                format!("rules[{i}].id"),
                "is not an escalation rule of this company and mode",
            );
        }
        if let Some(entity) = rule.conditions.entity_id
            && !known.entities.contains(&entity)
        {
            problem(
                format!("rules[{i}].conditions.entityId"),
                "must be an entity of this company",
            );
        }
        if let Some(user) = rule.action.escalate_to_id
            && !known.users.contains(&user)
        {
            problem(
                format!("rules[{i}].action.escalateToId"),
                "must be a user of this company",
            );
        }
        if let Some(team) = rule.action.escalate_to_team_id
            && !known.teams.contains(&team)
        {
            problem(
                format!("rules[{i}].action.escalateToTeamId"),
                "must be a team of this company (in the key's mode)",
            );
        }
    }
    errors
}
