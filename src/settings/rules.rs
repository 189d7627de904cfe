//! `/settings/escalation-rules`: the key's mode's list of escalation rules,
//! read whole and replaced whole. The rules and their scheduler live in
//! `tickets::rules`; this module checks what a client sends.

use std::collections::HashSet;
use std::str::FromStr;

use axum::extract::State;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa_axum::routes;

use crate::auth::{Principal, Scope};
use crate::custom_fields;
use crate::custom_fields::model::{Definition, RecordKind, json_filter};
use crate::db::Db;
use crate::domain::UnknownValue;
use crate::error::{ApiError, ApiResult, FieldError};
use crate::extract::{Json, Requested};
use crate::router::ApiRouter;
use crate::tags::model::tag_set;
use crate::tickets::model::{Priority, REASON_MAX, TicketStatus};
use crate::tickets::rules::{
    self, Action, Conditions, MAX_RULES, MINUTES_MAX, NewRule, Rule, stored_field_condition,
};
use crate::time::Clock;
use crate::validate::{
    Fields, NAME_MAX, ensure, optional_enum, optional_id, optional_text, problem, required_text,
};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .route(Scope::SettingsRead, routes!(list))
        .route(Scope::SettingsWrite, routes!(replace))
}

/// `{rules: [...]}`, the shape of both the PUT body and every response, so
/// a client can read the list, change it and send it back.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = EscalationRuleList)]
pub(crate) struct RulesResponse {
    rules: Vec<Rule>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = EscalationRulesInput)]
#[serde(deny_unknown_fields)]
pub(crate) struct RulesBody {
    #[schema(required)]
    rules: Option<Vec<RuleBody>>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = EscalationRuleInput)]
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
#[schema(as = EscalationConditionsInput)]
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
    /// The ticket carries every one of these tags (normalised like tags).
    #[schema(value_type = Option<Vec<String>>)]
    tags: Option<Value>,
    /// The ticket carries at least one of these tags.
    #[schema(value_type = Option<Vec<String>>)]
    any_tags: Option<Value>,
    /// The ticket's custom fields satisfy these, as the `cf.` filters of
    /// `GET /tickets`: `{"plan": "pro", "order_total": {"gte": 100, "lt": 500}}`
    /// (a value alone is `eq`; operators `eq`, `gt`, `gte`, `lt`, `lte`).
    #[schema(value_type = Option<Object>)]
    custom_fields: Option<Value>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = EscalationActionInput)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ActionBody {
    /// A user of the company who takes the ticket over.
    #[schema(value_type = Option<uuid::Uuid>)]
    escalate_to_id: Option<String>,
    /// A team of the company (in the key's mode): the ticket moves into it
    /// and, without `escalateToId`, is unassigned and enters its routing.
    /// At least one of `escalateToId` and `escalateToTeamId` is required.
    #[schema(value_type = Option<uuid::Uuid>)]
    escalate_to_team_id: Option<String>,
    reason: Option<String>,
}

fn priority_list() -> utoipa::openapi::schema::ArrayBuilder {
    utoipa::openapi::schema::ArrayBuilder::new().items(crate::openapi::schema::ticket_priority())
}

fn status_list() -> utoipa::openapi::schema::ArrayBuilder {
    utoipa::openapi::schema::ArrayBuilder::new().items(crate::openapi::schema::ticket_status())
}

/// List escalation rules
///
/// The key's mode's rules, in evaluation order.
#[utoipa::path(get, path = "/settings/escalation-rules", operation_id = "list_rules",
    tag = "Settings",
    responses((status = 200, description = "The rules", body = RulesResponse)))]
async fn list(State(db): State<Db>, principal: Principal) -> ApiResult<Json<RulesResponse>> {
    let rules = rules::list(&db, &principal.tenant).await?;
    Ok(Json(RulesResponse { rules }))
}

/// Replace escalation rules
///
/// The list is replaced whole; a rule sent with its `id` keeps its history.
/// The response has the shape of the body, so a client can read, change and
/// send it back.
#[utoipa::path(put, path = "/settings/escalation-rules", operation_id = "replace_rules",
    tag = "Settings",
    request_body = RulesBody,
    responses((status = 200, description = "The rules as stored", body = RulesResponse)))]
async fn replace(
    State(db): State<Db>,
    State(clock): State<Clock>,
    principal: Principal,
    requested: Requested,
    Json(body): Json<RulesBody>,
) -> ApiResult<Json<RulesResponse>> {
    let definitions = if body.has_field_conditions() {
        custom_fields::store::list(&db, &principal.tenant).await?
    } else {
        Vec::new()
    };
    let new = parse_rules(body, &definitions)?;
    let rules = rules::replace(
        &principal.acting(&db, requested),
        &principal.tenant,
        &new,
        clock.now(),
    )
    .await?;
    Ok(Json(RulesResponse { rules }))
}

impl RulesBody {
    /// Whether a rule has a custom field condition (which needs the
    /// definitions to be checked).
    fn has_field_conditions(&self) -> bool {
        self.rules.iter().flatten().any(|rule| {
            rule.conditions
                .as_ref()
                .is_some_and(|c| c.custom_fields.as_ref().is_some_and(|v| !v.is_null()))
        })
    }
}

/// Every rule checked, every problem listed (`rules[2].conditions.statuses`);
/// custom field conditions against `definitions`.
fn parse_rules(body: RulesBody, definitions: &[Definition]) -> Result<Vec<NewRule>, ApiError> {
    let Some(items) = body.rules else {
        return Err(ApiError::invalid_field("rules", "is required"));
    };
    let mut errors = Vec::new();
    if items.len() > MAX_RULES {
        errors.push(problem(
            "rules",
            format!("must hold at most {MAX_RULES} rules"),
        ));
    }
    let mut ids = HashSet::new();
    let mut rules = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        match parse_rule(&format!("rules[{i}]"), item, &mut ids, definitions) {
            Ok(rule) => rules.push(rule),
            Err(mut problems) => errors.append(&mut problems),
        }
    }
    if errors.is_empty() {
        Ok(rules)
    } else {
        Err(ApiError::validation(errors))
    }
}

/// One rule; `ids` holds the ids of the rules before it.
fn parse_rule(
    prefix: &str,
    item: RuleBody,
    ids: &mut HashSet<uuid::Uuid>,
    definitions: &[Definition],
) -> Result<NewRule, Vec<FieldError>> {
    let field = |name: &str| format!("{prefix}.{name}");
    let id = match optional_id(&field("id"), item.id.as_deref()) {
        Ok(Some(id)) if !ids.insert(id) => {
            Err(problem(&field("id"), "appears more than once in the list"))
        }
        checked => checked,
    };
    let (id, name, conditions, action) = (
        id,
        required_text(&field("name"), item.name.as_deref(), NAME_MAX),
        match item.conditions {
            Some(c) => parse_conditions(&field("conditions"), c, definitions),
            None => Err(vec![problem(&field("conditions"), "is required")]),
        },
        match item.action {
            Some(a) => parse_action(&field("action"), a),
            None => Err(vec![problem(&field("action"), "is required")]),
        },
    )
        .collect_errors()?;
    Ok(NewRule {
        id,
        name,
        enabled: item.enabled.unwrap_or(true),
        conditions,
        action,
    })
}

fn parse_conditions(
    prefix: &str,
    body: ConditionsBody,
    definitions: &[Definition],
) -> Result<Conditions, Vec<FieldError>> {
    let field = |name: &str| format!("{prefix}.{name}");
    let given_fields = body.custom_fields.filter(|v| !v.is_null());
    let entity = body.entity_id.as_deref().filter(|e| !e.trim().is_empty());
    let none_given = body.priorities.is_none()
        && body.statuses.is_none()
        && entity.is_none()
        && body.unassigned.is_none()
        && body.minutes_since_created.is_none()
        && body.minutes_since_last_activity.is_none()
        && body.tags.is_none()
        && body.any_tags.is_none()
        && given_fields.is_none();
    let (
        _,
        priorities,
        statuses,
        entity_id,
        minutes_since_created,
        minutes_since_last_activity,
        tags,
        any_tags,
        custom_fields,
    ) = (
        ensure(
            !none_given,
            prefix,
            "give at least one of: priorities, statuses, entityId, unassigned, \
             minutesSinceCreated, minutesSinceLastActivity, tags, anyTags, customFields",
        ),
        enum_list::<Priority>(&field("priorities"), body.priorities),
        enum_list::<TicketStatus>(&field("statuses"), body.statuses),
        optional_id(&field("entityId"), entity),
        minutes(&field("minutesSinceCreated"), body.minutes_since_created),
        minutes(
            &field("minutesSinceLastActivity"),
            body.minutes_since_last_activity,
        ),
        tag_list(&field("tags"), body.tags),
        tag_list(&field("anyTags"), body.any_tags),
        field_conditions(&field("customFields"), given_fields, definitions),
    )
        .collect_errors()?;
    Ok(Conditions {
        priorities,
        statuses,
        entity_id,
        unassigned: body.unassigned,
        minutes_since_created,
        minutes_since_last_activity,
        tags,
        any_tags,
        custom_fields,
    })
}

/// A non-empty custom field condition, parsed as the `cf.` filters are and
/// kept in the form the scheduler parses again at every pass.
pub(crate) fn field_conditions(
    field: &str,
    value: Option<Value>,
    definitions: &[Definition],
) -> Result<Option<Value>, Vec<FieldError>> {
    let Some(value) = value else {
        return Ok(None);
    };
    let filter = json_filter(field, &value, definitions, RecordKind::Ticket)?;
    if filter.is_empty() {
        return Err(vec![problem(
            field,
            "must name at least one field (leave it out to match any)",
        )]);
    }
    Ok(Some(stored_field_condition(&filter)))
}

/// A non-empty set of tags, normalised as on a ticket (trimmed,
/// lower-cased, duplicates collapsed, sorted); `null` is absent.
pub(crate) fn tag_list(
    field: &str,
    value: Option<Value>,
) -> Result<Option<Vec<String>>, FieldError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(value) => match tag_set(field, &value)? {
            tags if tags.is_empty() => Err(problem(
                field,
                "must list at least one tag (leave it out to match any)",
            )),
            tags => Ok(Some(tags)),
        },
    }
}

/// A non-empty list of exact enum values, duplicates dropped; every unknown
/// value is listed.
pub(crate) fn enum_list<E>(
    field: &str,
    values: Option<Vec<String>>,
) -> Result<Option<Vec<E>>, Vec<FieldError>>
where
    E: FromStr<Err = UnknownValue> + PartialEq,
{
    let Some(values) = values else {
        return Ok(None);
    };
    if values.is_empty() {
        return Err(vec![problem(
            field,
            "must list at least one value (leave it out to match any)",
        )]);
    }
    let mut list: Vec<E> = Vec::new();
    let mut errors = Vec::new();
    for value in &values {
        match optional_enum::<E>(field, Some(value)) {
            Ok(Some(found)) => {
                if !list.contains(&found) {
                    list.push(found);
                }
            }
            Ok(None) => {}
            Err(err) => errors.push(err),
        }
    }
    if errors.is_empty() {
        Ok(Some(list))
    } else {
        Err(errors)
    }
}

fn minutes(field: &str, value: Option<i64>) -> Result<Option<i64>, FieldError> {
    match value {
        Some(value) if !(0..=MINUTES_MAX).contains(&value) => Err(problem(
            field,
            format!("must be between 0 and {MINUTES_MAX}"),
        )),
        value => Ok(value),
    }
}

fn parse_action(prefix: &str, body: ActionBody) -> Result<Action, Vec<FieldError>> {
    let (escalate_to_id, escalate_to_team_id, reason) = (
        optional_id(
            &format!("{prefix}.escalateToId"),
            body.escalate_to_id.as_deref(),
        ),
        optional_id(
            &format!("{prefix}.escalateToTeamId"),
            body.escalate_to_team_id.as_deref(),
        ),
        optional_text(
            &format!("{prefix}.reason"),
            body.reason.as_deref(),
            REASON_MAX,
        ),
    )
        .collect_errors()?;
    if escalate_to_id.is_none() && escalate_to_team_id.is_none() {
        return Err(vec![problem(
            &format!("{prefix}.escalateToId"),
            "give escalateToId, escalateToTeamId or both",
        )]);
    }
    Ok(Action {
        escalate_to_id,
        escalate_to_team_id,
        reason,
    })
}
