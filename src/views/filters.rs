//! A view's filters: a JSON object of the ticket list's query parameters
//! (`status`, `tag`, `cf.<key>`, …), parsed by the list's own parser into
//! the store's `TicketFilter`, and written back in canonical form (what is
//! stored and shown). Reading a view's tickets parses the stored form again,
//! so the filter is the list's at that moment (`snoozed`, custom fields).

use serde_json::{Map, Value};

use super::Sort;
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult, FieldError};
use crate::tickets::TicketReads;
use crate::tickets::listing::{ListQuery, filter_of};
use crate::tickets::model::{TicketFilter, ticket_number};
use crate::validate::problem;

/// The list's parameters a view may hold: every filter, paging aside (the
/// order is the view's `sort`), and `cf.<key>` conditions.
const PARAMS: &[&str] = &[
    "ticketNumber",
    "entityId",
    "status",
    "priority",
    "assignedToId",
    "assigned",
    "teamId",
    "q",
    "slaBreached",
    "slaDueBefore",
    "snoozed",
    "tag",
    "anyTag",
];

/// Parameters read from the raw query string rather than `ListQuery`.
fn raw_only(name: &str) -> bool {
    matches!(name, "tag" | "anyTag") || name.starts_with("cf.")
}

/// The filters `raw` names (an object; null or absent is none) with the
/// order `sort`, checked: the store's filter and the canonical form.
pub(crate) async fn check(
    state: &TicketReads,
    principal: &Principal,
    raw: Option<&Value>,
    sort: Sort,
) -> ApiResult<(TicketFilter, Map<String, Value>)> {
    let pairs = pairs(raw).map_err(ApiError::validation)?;
    let simple: Map<String, Value> = pairs
        .iter()
        .filter(|(name, _)| !raw_only(name))
        .map(|(name, value)| (name.clone(), Value::String(value.clone())))
        .chain([("order".to_string(), Value::String(sort.as_str().into()))])
        .collect();
    // Built apart: the serializer is not `Send`, and the parse below awaits.
    let query_string = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(&pairs)
        .finish();
    let list: ListQuery = serde_json::from_value(Value::Object(simple))
        .map_err(|err| ApiError::invalid_field("filters", err.to_string()))?;
    let filter = filter_of(state, principal, &list, Some(query_string.as_str()))
        .await
        .map_err(under_filters)?;
    let canonical = canonical(&filter, &pairs);
    Ok((filter, canonical))
}

/// The (name, value) query pairs of the filters object.
fn pairs(raw: Option<&Value>) -> Result<Vec<(String, String)>, Vec<FieldError>> {
    let object = match raw {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Object(object)) => object,
        Some(_) => return Err(vec![problem("filters", "must be an object")]),
    };
    let mut pairs = Vec::new();
    let mut problems = Vec::new();
    for (name, value) in object {
        let field = format!("filters.{name}");
        let known = PARAMS.contains(&name.as_str()) || (name.len() > 3 && name.starts_with("cf."));
        if !known {
            let message = format!("unknown filter; known: {}, cf.<key>", PARAMS.join(", "));
            problems.push(problem(&field, message));
            continue;
        }
        let text = match value {
            Value::Null => continue,
            Value::String(text) => text.clone(),
            Value::Bool(flag) => flag.to_string(),
            Value::Number(number) => number.to_string(),
            Value::Array(items) if matches!(name.as_str(), "tag" | "anyTag") => {
                let texts: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
                match texts {
                    Some(texts) => texts.join(","),
                    None => {
                        problems.push(problem(&field, "must be a list of tags"));
                        continue;
                    }
                }
            }
            _ => {
                problems.push(problem(&field, "must be a string, a number or a boolean"));
                continue;
            }
        };
        if !text.is_empty() {
            pairs.push((name.clone(), text));
        }
    }
    match problems.is_empty() {
        true => Ok(pairs),
        false => Err(problems),
    }
}

/// The list parser's problems named as the view's fields.
fn under_filters(mut error: ApiError) -> ApiError {
    for detail in &mut error.details {
        detail.field = match detail.field.as_str() {
            "order" => "sort".to_string(),
            field => format!("filters.{field}"),
        };
    }
    if let [only] = error.details.as_slice() {
        error.message = format!("{}: {}", only.field, only.message);
    }
    error
}

/// What is stored and shown: each filter's parsed value, and the
/// `cf.<key>` conditions as given (checked against the definitions).
fn canonical(filter: &TicketFilter, pairs: &[(String, String)]) -> Map<String, Value> {
    let mut out = Map::new();
    let mut put = |name: &str, value: Value| {
        out.insert(name.to_string(), value);
    };
    let text = |value: &str| Value::String(value.to_string());
    if let Some(number) = filter.number {
        put("ticketNumber", text(&ticket_number(number)));
    }
    if let Some(id) = filter.entity_id {
        put("entityId", text(&id.to_string()));
    }
    if let Some(status) = filter.status {
        put("status", text(status.as_str()));
    }
    if let Some(priority) = filter.priority {
        put("priority", text(priority.as_str()));
    }
    if let Some(id) = filter.assigned_to_id {
        put("assignedToId", text(&id.to_string()));
    }
    if let Some(assigned) = filter.assigned {
        put("assigned", Value::Bool(assigned));
    }
    if let Some(id) = filter.team_id {
        put("teamId", text(&id.to_string()));
    }
    let given_q = pairs.iter().find(|(name, _)| name == "q");
    if let (Some(_), Some((_, q))) = (&filter.search, given_q) {
        put("q", text(q.trim()));
    }
    if let Some(breached) = filter.sla_breached {
        put("slaBreached", Value::Bool(breached));
    }
    if let Some(before) = filter.sla_due_before {
        put(
            "slaDueBefore",
            serde_json::to_value(before).unwrap_or(Value::Null),
        );
    }
    if let Some(snoozed) = filter.snoozed {
        put("snoozed", Value::Bool(snoozed.snoozed));
    }
    if !filter.tags.all.is_empty() {
        put("tag", Value::from(filter.tags.all.clone()));
    }
    if !filter.tags.any.is_empty() {
        put("anyTag", Value::from(filter.tags.any.clone()));
    }
    for (name, value) in pairs.iter().filter(|(name, _)| name.starts_with("cf.")) {
        put(name, text(value));
    }
    out
}
