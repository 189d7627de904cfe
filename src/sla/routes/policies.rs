//! `/settings/sla-policies`: the key's mode's ordered list of SLA policies,
//! read whole and replaced whole (like the escalation rules). The first
//! enabled policy whose conditions a ticket meets applies to it.

use std::collections::HashSet;
use std::sync::Arc;

use axum::extract::State;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::auth::{Principal, Scope};
use crate::custom_fields;
use crate::custom_fields::model::Definition;
use crate::db::Db;
use crate::error::{ApiError, ApiResult, FieldError};
use crate::extract::{Json, Requested};
use crate::realtime::Realtime;
use crate::router::ApiRouter;
use crate::settings::rules::{enum_list, field_conditions, tag_list};
use crate::sla::cache::SlaCache;
use crate::sla::model::{
    DEFAULT_WARN_MINUTES, MAX_POLICIES, Policy, PolicyConditions, PolicyInput, TARGET_MINUTES_MAX,
    Targets, TargetsByPriority,
};
use crate::sla::store;
use crate::time::Clock;
use crate::validate::{Fields, NAME_MAX, optional_id, problem, required_text};
use vocab::ticket::{Priority, TicketStatus};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::SettingsRead, routes!(list))
        .route(Scope::SettingsWrite, routes!(replace))
}

/// `{policies: [...]}`, the shape of both the PUT body and every response,
/// so a client can read the list, change it and send it back.
#[derive(Serialize, ToSchema)]
#[schema(as = SlaPolicyList)]
pub(crate) struct PoliciesResponse {
    policies: Vec<Policy>,
}

#[derive(Deserialize, ToSchema)]
#[schema(as = SlaPoliciesInput)]
#[serde(deny_unknown_fields)]
pub(crate) struct PoliciesBody {
    #[schema(required)]
    policies: Option<Vec<PolicyBody>>,
}

#[derive(Deserialize, ToSchema)]
#[schema(as = SlaPolicyInput)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct PolicyBody {
    /// Keeps an existing policy; absent creates one.
    #[schema(value_type = Option<Uuid>)]
    id: Option<String>,
    #[schema(value_type = String, required, min_length = 1, max_length = 255)]
    name: Option<String>,
    /// Default true.
    enabled: Option<bool>,
    /// Default: every ticket.
    conditions: Option<ConditionsBody>,
    /// `{"URGENT": {"firstResponseMinutes": 30, "resolutionMinutes": 240}, …}`.
    #[schema(value_type = TargetsByPriority, required)]
    targets: Option<Value>,
    /// `null` or absent: around the clock.
    #[schema(value_type = Option<Uuid>)]
    business_hours_id: Option<String>,
    /// Statuses that pause the resolution clock (not RESOLVED or CLOSED,
    /// which fulfil it).
    #[schema(value_type = Option<Vec<String>>)]
    pause_on: Option<Vec<String>>,
    /// Business minutes before a due time for `sla.warning`; default 15.
    warn_minutes: Option<i64>,
    /// Shown by GET; accepted and ignored so a list can be sent back as read.
    #[serde(default, rename = "createdAt")]
    #[schema(value_type = Option<String>)]
    _created_at: Option<Value>,
    #[serde(default, rename = "updatedAt")]
    #[schema(value_type = Option<String>)]
    _updated_at: Option<Value>,
}

/// Unknown keys are refused: a misspelt condition must not silently widen
/// a policy.
#[derive(Deserialize, ToSchema)]
#[schema(as = SlaConditionsInput)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ConditionsBody {
    #[schema(value_type = Option<Vec<String>>)]
    priorities: Option<Vec<String>>,
    #[schema(value_type = Option<Uuid>)]
    entity_id: Option<String>,
    #[schema(value_type = Option<Uuid>)]
    team_id: Option<String>,
    #[schema(value_type = Option<Vec<String>>)]
    tags: Option<Value>,
    #[schema(value_type = Option<Object>)]
    custom_fields: Option<Value>,
}

/// List SLA policies
///
/// The key's mode's policies, in evaluation order.
#[utoipa::path(get, path = "/settings/sla-policies", operation_id = "list_sla_policies",
    tag = "Settings",
    responses((status = 200, description = "The policies", body = PoliciesResponse)))]
async fn list(State(db): State<Db>, principal: Principal) -> ApiResult<Json<PoliciesResponse>> {
    let policies = store::list_policies(&db, &principal.tenant).await?;
    Ok(Json(PoliciesResponse { policies }))
}

/// Replace SLA policies
///
/// The list is replaced whole, in evaluation order; a policy sent with its
/// `id` keeps it. The response has the shape of the body.
#[utoipa::path(put, path = "/settings/sla-policies", operation_id = "replace_sla_policies",
    tag = "Settings",
    request_body = PoliciesBody,
    responses((status = 200, description = "The policies as stored", body = PoliciesResponse)))]
async fn replace(
    State(db): State<Db>,
    State(clock): State<Clock>,
    State(sla): State<Arc<SlaCache>>,
    State(realtime): State<Arc<Realtime>>,
    principal: Principal,
    requested: Requested,
    Json(body): Json<PoliciesBody>,
) -> ApiResult<Json<PoliciesResponse>> {
    let with_fields = body.policies.iter().flatten().any(|p| {
        p.conditions
            .as_ref()
            .is_some_and(|c| c.custom_fields.as_ref().is_some_and(|v| !v.is_null()))
    });
    let definitions = if with_fields {
        custom_fields::store::list(&db, &principal.tenant).await?
    } else {
        Vec::new()
    };
    let inputs = parse_policies(body, &definitions)?;
    let policies = store::replace_policies(
        &principal.acting(&db, requested),
        &principal.tenant,
        &inputs,
        clock.now(),
    )
    .await?;
    sla.changed(&realtime.bus, principal.tenant.company_id)
        .await;
    Ok(Json(PoliciesResponse { policies }))
}

fn parse_policies(body: PoliciesBody, definitions: &[Definition]) -> ApiResult<Vec<PolicyInput>> {
    let Some(items) = body.policies else {
        return Err(ApiError::invalid_field("policies", "is required"));
    };
    let mut errors = Vec::new();
    if items.len() > MAX_POLICIES {
        let message = format!("must hold at most {MAX_POLICIES} policies");
        errors.push(problem("policies", message));
    }
    let mut ids = HashSet::new();
    let mut policies = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        match parse_policy(&format!("policies[{i}]"), item, &mut ids, definitions) {
            Ok(policy) => policies.push(policy),
            Err(mut problems) => errors.append(&mut problems),
        }
    }
    if errors.is_empty() {
        Ok(policies)
    } else {
        Err(ApiError::validation(errors))
    }
}

fn parse_policy(
    prefix: &str,
    item: PolicyBody,
    ids: &mut HashSet<Uuid>,
    definitions: &[Definition],
) -> Result<PolicyInput, Vec<FieldError>> {
    let field = |name: &str| format!("{prefix}.{name}");
    let id = match optional_id(&field("id"), item.id.as_deref()) {
        Ok(Some(id)) if !ids.insert(id) => {
            Err(problem(&field("id"), "appears more than once in the list"))
        }
        checked => checked,
    };
    let (id, name, conditions, targets, business_hours_id, pause_on, warn_minutes) = (
        id,
        required_text(&field("name"), item.name.as_deref(), NAME_MAX),
        match item.conditions {
            Some(c) => parse_conditions(&field("conditions"), c, definitions),
            None => Ok(PolicyConditions::default()),
        },
        parse_targets(&field("targets"), item.targets),
        optional_id(&field("businessHoursId"), item.business_hours_id.as_deref()),
        pause_statuses(&field("pauseOn"), item.pause_on),
        minutes(&field("warnMinutes"), item.warn_minutes, 0),
    )
        .collect_errors()?;
    Ok(PolicyInput {
        id,
        name,
        enabled: item.enabled.unwrap_or(true),
        conditions,
        targets,
        business_hours_id,
        pause_on,
        warn_minutes: warn_minutes.unwrap_or(DEFAULT_WARN_MINUTES),
    })
}

fn parse_conditions(
    prefix: &str,
    body: ConditionsBody,
    definitions: &[Definition],
) -> Result<PolicyConditions, Vec<FieldError>> {
    let field = |name: &str| format!("{prefix}.{name}");
    let given_fields = body.custom_fields.filter(|v| !v.is_null());
    let (priorities, entity_id, team_id, tags, custom_fields) = (
        enum_list::<Priority>(&field("priorities"), body.priorities),
        optional_id(&field("entityId"), body.entity_id.as_deref()),
        optional_id(&field("teamId"), body.team_id.as_deref()),
        tag_list(&field("tags"), body.tags),
        field_conditions(&field("customFields"), given_fields, definitions),
    )
        .collect_errors()?;
    Ok(PolicyConditions {
        priorities,
        entity_id,
        team_id,
        tags,
        custom_fields,
    })
}

/// `{PRIORITY: {metric: minutes}}`: at least one priority, each with at
/// least one metric.
fn parse_targets(field: &str, value: Option<Value>) -> Result<TargetsByPriority, Vec<FieldError>> {
    let Some(Value::Object(map)) = value else {
        let message = "is required: {PRIORITY: {firstResponseMinutes, nextResponseMinutes, \
                       resolutionMinutes}}";
        return Err(vec![problem(field, message)]);
    };
    if map.is_empty() {
        return Err(vec![problem(
            field,
            "must give targets for at least one priority",
        )]);
    }
    let mut targets = TargetsByPriority::default();
    let mut errors = Vec::new();
    for (key, value) in map {
        let at = format!("{field}.{key}");
        let Ok(priority) = key.parse::<Priority>() else {
            let message = format!(
                "is not a priority; use one of: {}",
                Priority::NAMES.join(", ")
            );
            errors.push(problem(&at, message));
            continue;
        };
        match metric_targets(&at, value) {
            Ok(found) => *targets.slot(priority) = Some(found),
            Err(mut problems) => errors.append(&mut problems),
        }
    }
    if errors.is_empty() {
        Ok(targets)
    } else {
        Err(errors)
    }
}

fn metric_targets(field: &str, value: Value) -> Result<Targets, Vec<FieldError>> {
    let Value::Object(map) = value else {
        return Err(vec![problem(
            field,
            "must be an object of minutes per metric",
        )]);
    };
    let known = [
        "firstResponseMinutes",
        "nextResponseMinutes",
        "resolutionMinutes",
    ];
    let mut errors: Vec<FieldError> = map
        .keys()
        .filter(|k| !known.contains(&k.as_str()))
        .map(|k| problem(&format!("{field}.{k}"), "is not a metric"))
        .collect();
    let mut read = |name: &str| {
        let at = format!("{field}.{name}");
        match map.get(name) {
            None | Some(Value::Null) => None,
            Some(value) => match value.as_i64() {
                Some(n) => minutes(&at, Some(n), 1).unwrap_or_else(|e| {
                    errors.push(e);
                    None
                }),
                None => {
                    errors.push(problem(&at, "must be a whole number of minutes"));
                    None
                }
            },
        }
    };
    let targets = Targets {
        first_response_minutes: read("firstResponseMinutes"),
        next_response_minutes: read("nextResponseMinutes"),
        resolution_minutes: read("resolutionMinutes"),
    };
    if errors.is_empty() && targets == Targets::default() {
        errors.push(problem(field, "must give at least one metric"));
    }
    if errors.is_empty() {
        Ok(targets)
    } else {
        Err(errors)
    }
}

fn minutes(field: &str, value: Option<i64>, least: i64) -> Result<Option<i64>, FieldError> {
    match value {
        Some(n) if !(least..=TARGET_MINUTES_MAX).contains(&n) => Err(problem(
            field,
            format!("must be between {least} and {TARGET_MINUTES_MAX}"),
        )),
        value => Ok(value),
    }
}

/// Statuses to pause on; RESOLVED and CLOSED fulfil instead.
fn pause_statuses(
    field: &str,
    values: Option<Vec<String>>,
) -> Result<Vec<TicketStatus>, Vec<FieldError>> {
    let Some(values) = values.filter(|v| !v.is_empty()) else {
        return Ok(Vec::new());
    };
    let statuses = enum_list::<TicketStatus>(field, Some(values))?.unwrap_or_default();
    if statuses
        .iter()
        .any(|s| matches!(s, TicketStatus::Resolved | TicketStatus::Closed))
    {
        return Err(vec![problem(
            field,
            "must not hold RESOLVED or CLOSED: they fulfil the resolution target",
        )]);
    }
    Ok(statuses)
}
