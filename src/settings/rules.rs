//! `/settings/escalation-rules`: the key's mode's list of escalation rules,
//! read whole and replaced whole. The rules and their scheduler live in
//! `tickets::rules`; this module checks what a client sends.

use std::collections::HashSet;

use axum::extract::State;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::auth::{Principal, Scope};
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::router::ApiRouter;
use crate::state::AppState;
use crate::tickets::model::{PRIORITIES, REASON_MAX, STATUSES};
use crate::tickets::rules::{self, Action, Conditions, MAX_RULES, MINUTES_MAX, NewRule, Rule};
use crate::validate::{NAME_MAX, Validator};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .get("/settings/escalation-rules", Scope::SettingsRead, list)
        .put("/settings/escalation-rules", Scope::SettingsWrite, replace)
}

/// `{rules: [...]}`, the shape of both the PUT body and every response, so
/// a client can read the list, change it and send it back.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct RulesResponse {
    rules: Vec<Rule>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RulesBody {
    #[schema(required)]
    rules: Option<Vec<RuleBody>>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct RuleBody {
    /// Keeps an existing rule (and its history); absent creates one.
    #[schema(value_type = Option<uuid::Uuid>)]
    id: Option<String>,
    #[schema(value_type = String, required, min_length = 1, max_length = 255)]
    name: Option<String>,
    enabled: Option<bool>,
    #[schema(required)]
    conditions: Option<ConditionsBody>,
    #[schema(required)]
    action: Option<ActionBody>,
    /// Shown by GET; accepted and ignored so a list can be sent back as read.
    #[serde(default, rename = "createdAt")]
    #[schema(value_type = Option<String>)]
    _created_at: Option<Value>,
    #[serde(default, rename = "updatedAt")]
    #[schema(value_type = Option<String>)]
    _updated_at: Option<Value>,
}

/// Unknown keys are refused: a misspelt condition must not silently widen
/// a rule.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ConditionsBody {
    #[schema(schema_with = priority_list)]
    priorities: Option<Vec<String>>,
    #[schema(schema_with = status_list)]
    statuses: Option<Vec<String>>,
    #[schema(value_type = Option<uuid::Uuid>)]
    entity_id: Option<String>,
    unassigned: Option<bool>,
    minutes_since_created: Option<i64>,
    minutes_since_last_activity: Option<i64>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ActionBody {
    #[schema(value_type = uuid::Uuid, required)]
    escalate_to_id: Option<String>,
    reason: Option<String>,
}

fn priority_list() -> utoipa::openapi::schema::ArrayBuilder {
    utoipa::openapi::schema::ArrayBuilder::new().items(crate::openapi::schema::ticket_priority())
}

fn status_list() -> utoipa::openapi::schema::ArrayBuilder {
    utoipa::openapi::schema::ArrayBuilder::new().items(crate::openapi::schema::ticket_status())
}

async fn list(
    State(state): State<AppState>,
    principal: Principal,
) -> ApiResult<Json<RulesResponse>> {
    let rules = rules::list(&state.db, &principal.tenant).await?;
    Ok(Json(RulesResponse { rules }))
}

async fn replace(
    State(state): State<AppState>,
    principal: Principal,
    Json(body): Json<RulesBody>,
) -> ApiResult<Json<RulesResponse>> {
    let new = parse_rules(body)?;
    let rules = rules::replace(&state.db, &principal.tenant, &new).await?;
    Ok(Json(RulesResponse { rules }))
}

/// Every rule checked, every problem listed (`rules[2].conditions.statuses`).
fn parse_rules(body: RulesBody) -> Result<Vec<NewRule>, ApiError> {
    let mut v = Validator::new();
    let Some(items) = body.rules else {
        return Err(ApiError::invalid_field("rules", "is required"));
    };
    if items.len() > MAX_RULES {
        v.add("rules", format!("must hold at most {MAX_RULES} rules"));
    }
    let mut ids = HashSet::new();
    let mut rules = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let field = |name: &str| format!("rules[{i}].{name}");
        let id = v.uuid(&field("id"), item.id.as_deref());
        if let Some(id) = id
            && !ids.insert(id)
        {
            v.add(&field("id"), "appears more than once in the list");
        }
        let name = v.required(&field("name"), item.name.as_deref(), NAME_MAX);
        let conditions = match item.conditions {
            Some(c) => Some(parse_conditions(&mut v, &field("conditions"), c)),
            None => {
                v.add(&field("conditions"), "is required");
                None
            }
        };
        let action = match item.action {
            Some(a) => parse_action(&mut v, &field("action"), a),
            None => {
                v.add(&field("action"), "is required");
                None
            }
        };
        if let (Some(name), Some(conditions), Some(action)) = (name, conditions, action) {
            rules.push(NewRule {
                id,
                name,
                enabled: item.enabled.unwrap_or(true),
                conditions,
                action,
            });
        }
    }
    v.finish()?;
    Ok(rules)
}

fn parse_conditions(v: &mut Validator, prefix: &str, body: ConditionsBody) -> Conditions {
    let field = |name: &str| format!("{prefix}.{name}");
    let entity = body.entity_id.as_deref().filter(|e| !e.trim().is_empty());
    let none_given = body.priorities.is_none()
        && body.statuses.is_none()
        && entity.is_none()
        && body.unassigned.is_none()
        && body.minutes_since_created.is_none()
        && body.minutes_since_last_activity.is_none();
    if none_given {
        v.add(
            prefix,
            "give at least one of: priorities, statuses, entityId, unassigned, \
             minutesSinceCreated, minutesSinceLastActivity",
        );
    }
    Conditions {
        priorities: enum_list(v, &field("priorities"), body.priorities, PRIORITIES),
        statuses: enum_list(v, &field("statuses"), body.statuses, STATUSES),
        entity_id: v.uuid(&field("entityId"), entity),
        unassigned: body.unassigned,
        minutes_since_created: minutes(
            v,
            &field("minutesSinceCreated"),
            body.minutes_since_created,
        ),
        minutes_since_last_activity: minutes(
            v,
            &field("minutesSinceLastActivity"),
            body.minutes_since_last_activity,
        ),
    }
}

/// A non-empty list of exact enum values, duplicates dropped.
fn enum_list(
    v: &mut Validator,
    field: &str,
    values: Option<Vec<String>>,
    allowed: &[&str],
) -> Option<Vec<String>> {
    let values = values?;
    if values.is_empty() {
        v.add(
            field,
            "must list at least one value (leave it out to match any)",
        );
        return None;
    }
    let mut list: Vec<String> = Vec::new();
    for value in &values {
        if let Some(found) = v.one_of(field, Some(value), allowed)
            && !list.iter().any(|l| l == found)
        {
            list.push(found.to_string());
        }
    }
    Some(list)
}

fn minutes(v: &mut Validator, field: &str, value: Option<i64>) -> Option<i64> {
    let value = value?;
    if !(0..=MINUTES_MAX).contains(&value) {
        v.add(field, format!("must be between 0 and {MINUTES_MAX}"));
        return None;
    }
    Some(value)
}

fn parse_action(v: &mut Validator, prefix: &str, body: ActionBody) -> Option<Action> {
    let to = v.required_uuid(
        &format!("{prefix}.escalateToId"),
        body.escalate_to_id.as_deref(),
    );
    let reason = v.optional(
        &format!("{prefix}.reason"),
        body.reason.as_deref(),
        REASON_MAX,
    );
    Some(Action {
        escalate_to_id: to?,
        reason,
    })
}
