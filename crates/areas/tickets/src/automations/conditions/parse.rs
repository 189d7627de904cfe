//! Parsing conditions on write: every problem, each named by its place,
//! and values normalised for their field and operator.

use serde::Serialize;
use serde_json::{Value, json};
use uuid::Uuid;

use super::field::NAMED;
use super::{CONDITIONS_MAX, Condition, Conditions, Field, MINUTES_MAX, Operator};
use crate::actor::ActorType;
use crate::automations::Kind;
use crate::error::FieldError;
use crate::model::{AuthorType, Priority, TicketChannel, TicketStatus};
use crate::validate::problem;

/// Parses `{"all": [...], "any": [...]}` for a rule of `kind`; every
/// problem, each named by its place (`conditions.all[0].value`).
pub fn parse(kind: Kind, raw: Option<&Value>) -> Result<Conditions, Vec<FieldError>> {
    let mut problems = Vec::new();
    let mut conditions = Conditions::default();
    let object = match raw {
        None | Some(Value::Null) => serde_json::Map::new(),
        Some(Value::Object(object)) => object.clone(),
        Some(_) => {
            return Err(vec![problem(
                "conditions",
                "must be {\"all\": [...], \"any\": [...]}",
            )]);
        }
    };
    for key in object
        .keys()
        .filter(|k| !matches!(k.as_str(), "all" | "any"))
    {
        problems.push(problem(
            &format!("conditions.{key}"),
            "is not allowed: give all and any",
        ));
    }
    for (group, list) in [("all", &mut conditions.all), ("any", &mut conditions.any)] {
        let items = match object.get(group) {
            None | Some(Value::Null) => continue,
            Some(Value::Array(items)) => items,
            Some(_) => {
                problems.push(problem(&format!("conditions.{group}"), "must be an array"));
                continue;
            }
        };
        for (i, item) in items.iter().enumerate() {
            match one(kind, item) {
                Ok(condition) => list.push(condition),
                Err((part, message)) => {
                    problems.push(problem(&format!("conditions.{group}[{i}]{part}"), message))
                }
            }
        }
    }
    if conditions.all.len() + conditions.any.len() > CONDITIONS_MAX {
        problems.push(problem(
            "conditions",
            format!("at most {CONDITIONS_MAX} conditions"),
        ));
    }
    if kind == Kind::Timed
        && !conditions
            .all
            .iter()
            .any(|c| c.field.is_time() && c.operator == Operator::Gte)
    {
        problems.push(problem(
            "conditions.all",
            "a timed automation needs a minutesSince… condition with gte in all",
        ));
    }
    match problems.is_empty() {
        true => Ok(conditions),
        false => Err(problems),
    }
}

type Problem = (&'static str, String);

fn one(kind: Kind, item: &Value) -> Result<Condition, Problem> {
    let Value::Object(object) = item else {
        return Err(("", "must be {field, operator, value}".into()));
    };
    if let Some(key) = object
        .keys()
        .find(|k| !matches!(k.as_str(), "field" | "operator" | "value"))
    {
        return Err(("", format!("unknown key {key}")));
    }
    let field = object
        .get("field")
        .and_then(Value::as_str)
        .and_then(Field::parse)
        .ok_or_else(|| {
            let known: Vec<&str> = NAMED.iter().map(|(n, _)| *n).collect();
            (
                ".field",
                format!(
                    "must be one of {}, customFields.<key>, contact.<field>, \
                     organization.<field>",
                    known.join(", ")
                ),
            )
        })?;
    let operator = object
        .get("operator")
        .and_then(Value::as_str)
        .and_then(|o| o.parse::<Operator>().ok())
        .ok_or_else(|| {
            (
                ".operator",
                format!("must be one of {}", Operator::NAMES.join(", ")),
            )
        })?;
    let raw = object.get("value").cloned().unwrap_or(Value::Null);
    let value = check(kind, &field, operator, raw)?;
    Ok(Condition {
        field,
        operator,
        value,
    })
}

/// The value normalised for its field and operator, or why it cannot be.
fn check(kind: Kind, field: &Field, operator: Operator, raw: Value) -> Result<Value, Problem> {
    use Operator::*;
    let bad_operator = || {
        (
            ".operator",
            format!("{operator} does not apply to {}", field.name()),
        )
    };
    match operator {
        ChangedTo | ChangedFrom if kind == Kind::Timed => {
            return Err((
                ".operator",
                "changed_to and changed_from are for triggers".into(),
            ));
        }
        ChangedTo | ChangedFrom if !field.changes() => return Err(bad_operator()),
        Gte | Lte if !(field.is_time() || field.is_custom() || *field == Field::CsatScore) => {
            return Err(bad_operator());
        }
        Contains if !(field.is_custom() || texts(field)) => return Err(bad_operator()),
        Is | IsNot | Contains | ChangedTo | ChangedFrom if field.is_time() => {
            return Err(bad_operator());
        }
        _ => {}
    }
    let value = |message: &str| (".value", message.to_string());
    match field {
        _ if field.is_time() => match raw.as_i64() {
            Some(n) if (0..=MINUTES_MAX).contains(&n) => Ok(json!(n)),
            _ => Err(value(&format!(
                "must be a whole number of minutes, 0 to {MINUTES_MAX}"
            ))),
        },
        Field::Status => {
            parsed::<TicketStatus>(&raw).ok_or_else(|| value("must be a ticket status"))
        }
        Field::Priority => parsed::<Priority>(&raw).ok_or_else(|| value("must be a priority")),
        Field::ActorType => parsed::<ActorType>(&raw).ok_or_else(|| value("must be an actor type")),
        Field::CommentAuthorType => {
            parsed::<AuthorType>(&raw).ok_or_else(|| value("must be agent or customer"))
        }
        Field::Channel => {
            parsed::<TicketChannel>(&raw).ok_or_else(|| value("must be api, email or chat"))
        }
        Field::CsatScore => match raw.as_i64() {
            Some(score) if (1..=5).contains(&score) => Ok(json!(score)),
            _ => Err(value("must be a score, 1 to 5")),
        },
        Field::SlaMetric => match raw.as_str() {
            Some(m @ ("firstResponse" | "nextResponse" | "resolution")) => Ok(json!(m)),
            _ => Err(value("must be firstResponse, nextResponse or resolution")),
        },
        Field::CommentInternal => raw
            .as_bool()
            .map(Value::Bool)
            .ok_or_else(|| value("must be true or false")),
        Field::AssignedToId | Field::TeamId | Field::EntityId => match &raw {
            Value::Null => Ok(Value::Null),
            Value::String(s) => s
                .parse::<Uuid>()
                .map(|id| json!(id))
                .map_err(|_| value("must be an id or null")),
            _ => Err(value("must be an id or null")),
        },
        Field::Tags => match raw.as_str().map(crate::tags::model::normalize) {
            Some(Ok(tag)) => Ok(json!(tag)),
            _ => Err(value("must be a tag")),
        },
        Field::Subject | Field::VisitorEmail => match raw {
            Value::String(_) => Ok(raw),
            Value::Null if operator != Contains => Ok(raw),
            _ => Err(value("must be text")),
        },
        Field::WithinBusinessHours => match raw.as_str().map(str::parse::<Uuid>) {
            Some(Ok(id)) => Ok(json!(id)),
            _ => Err(value("must be the id of a business-hours calendar")),
        },
        _ if field.is_custom() => match (&raw, operator) {
            (Value::Number(_), Gte | Lte) => Ok(raw),
            (_, Gte | Lte) => Err(value("must be a number")),
            (Value::String(_), Contains) => Ok(raw),
            (_, Contains) => Err(value("must be text")),
            _ => Ok(raw),
        },
        Field::Party(_, path) => match (path.as_str(), raw) {
            ("organizationId", Value::Null) => Ok(Value::Null),
            ("organizationId", Value::String(s)) => s
                .parse::<Uuid>()
                .map(|id| json!(id))
                .map_err(|_| value("must be an id or null")),
            ("organizationId", _) => Err(value("must be an id or null")),
            ("tags", raw) => match raw.as_str().map(crate::tags::model::normalize) {
                Some(Ok(tag)) => Ok(json!(tag)),
                _ => Err(value("must be a tag")),
            },
            // Stored lower-cased: compared so.
            ("emails" | "domains", Value::String(s)) => Ok(json!(s.trim().to_lowercase())),
            ("emails" | "domains", _) => Err(value("must be text")),
            (_, Value::String(s)) => Ok(Value::String(s)),
            (_, Value::Null) if operator != Contains => Ok(Value::Null),
            _ => Err(value("must be text")),
        },
        _ => Err(bad_operator()),
    }
}

/// Fields of text (or lists of text) that `contains` reads.
fn texts(field: &Field) -> bool {
    match field {
        Field::Subject | Field::VisitorEmail | Field::Tags => true,
        Field::Party(_, path) => path != "organizationId",
        _ => false,
    }
}

fn parsed<T: std::str::FromStr + Serialize>(raw: &Value) -> Option<Value> {
    raw.as_str()?.parse::<T>().ok().map(|v| json!(v))
}
