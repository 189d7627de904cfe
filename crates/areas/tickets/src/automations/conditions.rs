//! An automation's conditions: `{"all": [...], "any": [...]}` of
//! `{field, operator, value}`, parsed once on write into values that can
//! only be valid, and checked against a ticket (and, for a trigger, what
//! changed in the event that ran it).

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Value, json};
use uuid::Uuid;

use super::Kind;
use crate::actor::{Actor, ActorType};
use crate::error::FieldError;
use crate::model::{AuthorType, Priority, Ticket, TicketStatus};
use crate::time::Timestamp;
use crate::validate::problem;

/// The largest `minutesSince…` value: ten years.
pub const MINUTES_MAX: i64 = 10 * 365 * 24 * 60;
/// At most this many conditions in `all` and `any` together.
pub const CONDITIONS_MAX: usize = 50;

crate::text_enum! {
    /// How a condition compares its field with its value.
    pub enum Operator {
        Is = "is",
        IsNot = "is_not",
        Contains = "contains",
        ChangedTo = "changed_to",
        ChangedFrom = "changed_from",
        Gte = "gte",
        Lte = "lte",
    }
}

crate::text_enum! {
    /// The ticket events a trigger runs on.
    pub enum TriggerEvent {
        TicketCreated = "ticket.created",
        TicketUpdated = "ticket.updated",
        CommentCreated = "comment.created",
    }
}

/// What a condition looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field {
    Status,
    Priority,
    AssignedToId,
    TeamId,
    EntityId,
    Subject,
    VisitorEmail,
    /// The ticket's tags: `is`/`contains` a tag; `changed_to` a tag added,
    /// `changed_from` one removed.
    Tags,
    /// `chat` for a ticket made from a chat, else `api`.
    Channel,
    /// The type of who made the event's change (`agent`, `key`, …).
    ActorType,
    /// The event's comment: who wrote it (`agent` or `customer`).
    CommentAuthorType,
    /// The event's comment: whether it is an internal note.
    CommentInternal,
    /// `customFields.<key>`.
    CustomField(String),
    MinutesSinceCreated,
    MinutesSinceUpdated,
    MinutesSinceCustomerReply,
}

const NAMED: &[(&str, Field)] = &[
    ("status", Field::Status),
    ("priority", Field::Priority),
    ("assignedToId", Field::AssignedToId),
    ("teamId", Field::TeamId),
    ("entityId", Field::EntityId),
    ("subject", Field::Subject),
    ("visitorEmail", Field::VisitorEmail),
    ("tags", Field::Tags),
    ("channel", Field::Channel),
    ("actorType", Field::ActorType),
    ("commentAuthorType", Field::CommentAuthorType),
    ("commentInternal", Field::CommentInternal),
    ("minutesSinceCreated", Field::MinutesSinceCreated),
    ("minutesSinceUpdated", Field::MinutesSinceUpdated),
    (
        "minutesSinceCustomerReply",
        Field::MinutesSinceCustomerReply,
    ),
];

const CUSTOM_PREFIX: &str = "customFields.";

impl Field {
    pub fn parse(name: &str) -> Option<Field> {
        if let Some(key) = name.strip_prefix(CUSTOM_PREFIX) {
            return (!key.is_empty()).then(|| Field::CustomField(key.to_string()));
        }
        NAMED
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| f.clone())
    }

    pub fn name(&self) -> String {
        match self {
            Field::CustomField(key) => format!("{CUSTOM_PREFIX}{key}"),
            other => NAMED
                .iter()
                .find(|(_, f)| f == other)
                .map(|(n, _)| n.to_string())
                .unwrap_or_default(),
        }
    }

    /// Elapsed-time fields: compared with `gte`/`lte` in minutes.
    pub fn is_time(&self) -> bool {
        matches!(
            self,
            Field::MinutesSinceCreated
                | Field::MinutesSinceUpdated
                | Field::MinutesSinceCustomerReply
        )
    }

    /// Fields whose change an event reports (`changed_to`, `changed_from`).
    fn changes(&self) -> bool {
        matches!(
            self,
            Field::Status
                | Field::Priority
                | Field::AssignedToId
                | Field::TeamId
                | Field::Tags
                | Field::CustomField(_)
        )
    }
}

impl Serialize for Field {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Field::parse(&name).ok_or_else(|| serde::de::Error::custom(format!("unknown field {name}")))
    }
}

/// One condition; made only by [`parse`], so its value fits its field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(as = AutomationCondition)]
pub struct Condition {
    #[schema(value_type = String, example = "status")]
    pub field: Field,
    #[schema(value_type = String, example = "changed_to")]
    pub operator: Operator,
    #[schema(value_type = Object)]
    pub value: Value,
}

/// Every condition of `all` holds, and one of `any` when it has some.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(as = AutomationConditions)]
pub struct Conditions {
    #[serde(default)]
    pub all: Vec<Condition>,
    #[serde(default)]
    pub any: Vec<Condition>,
}

/// What changed in the event a trigger runs on.
#[derive(Debug, Clone, PartialEq)]
pub struct Happening {
    pub event: TriggerEvent,
    pub ticket_id: Uuid,
    /// Who made it (None on events written before changes named one).
    pub actor: Option<Actor>,
    /// `{field name: (from, to)}` of the fields it changed.
    pub changes: BTreeMap<String, (Value, Value)>,
    pub tags_added: Vec<String>,
    pub tags_removed: Vec<String>,
    /// The comment of a `comment.created`: its author type and whether it
    /// is an internal note.
    pub comment: Option<(AuthorType, bool)>,
    /// The automation whose change this is: it never runs on it again.
    pub by_rule: Option<Uuid>,
}

/// What conditions are checked against.
pub struct Facts<'a> {
    pub ticket: &'a Ticket,
    pub now: Timestamp,
    pub last_customer_reply: Option<Timestamp>,
    pub happening: Option<&'a Happening>,
}

impl Conditions {
    pub fn hold(&self, facts: &Facts) -> bool {
        self.all.iter().all(|c| c.holds(facts))
            && (self.any.is_empty() || self.any.iter().any(|c| c.holds(facts)))
    }

    /// Whether any condition reads the time since the last customer reply
    /// (which takes a query to know).
    pub fn reads_customer_reply(&self) -> bool {
        self.all
            .iter()
            .chain(&self.any)
            .any(|c| c.field == Field::MinutesSinceCustomerReply)
    }

    /// The least minutes since creation and since the last update that
    /// `all` requires (`gte`): a timed pass reads only tickets that old.
    pub fn least_minutes(&self) -> (Option<i64>, Option<i64>) {
        let least = |field: Field| {
            self.all
                .iter()
                .filter(|c| c.field == field && c.operator == Operator::Gte)
                .filter_map(|c| c.value.as_i64())
                .max()
        };
        (
            least(Field::MinutesSinceCreated),
            least(Field::MinutesSinceUpdated),
        )
    }
}

fn minutes_since(now: Timestamp, then: Timestamp) -> i64 {
    (now.0 - then.0).num_minutes()
}

impl Condition {
    fn actual(&self, facts: &Facts) -> Value {
        let t = facts.ticket;
        let happening = facts.happening;
        match &self.field {
            Field::Status => json!(t.status),
            Field::Priority => json!(t.priority),
            Field::AssignedToId => json!(t.assigned_to_id),
            Field::TeamId => json!(t.team_id),
            Field::EntityId => json!(t.entity_id),
            Field::Subject => json!(t.subject),
            Field::VisitorEmail => json!(t.visitor_email),
            Field::Tags => json!(t.tags),
            Field::Channel => json!(if t.chat_session_id.is_some() {
                "chat"
            } else {
                "api"
            }),
            Field::ActorType => json!(happening.and_then(|h| h.actor.as_ref()).map(|a| a.kind)),
            Field::CommentAuthorType => json!(happening.and_then(|h| h.comment).map(|c| c.0)),
            Field::CommentInternal => json!(happening.and_then(|h| h.comment).map(|c| c.1)),
            Field::CustomField(key) => t.custom_fields.get(key).cloned().unwrap_or(Value::Null),
            Field::MinutesSinceCreated => json!(minutes_since(facts.now, t.created_at)),
            Field::MinutesSinceUpdated => json!(minutes_since(facts.now, t.updated_at)),
            Field::MinutesSinceCustomerReply => json!(
                facts
                    .last_customer_reply
                    .map(|at| minutes_since(facts.now, at))
            ),
        }
    }

    pub fn holds(&self, facts: &Facts) -> bool {
        let wanted = &self.value;
        match self.operator {
            Operator::Is => is(&self.actual(facts), wanted),
            Operator::IsNot => !is(&self.actual(facts), wanted),
            Operator::Contains => match self.actual(facts) {
                Value::Array(items) => items.contains(wanted),
                Value::String(text) => wanted
                    .as_str()
                    .is_some_and(|part| text.to_lowercase().contains(&part.to_lowercase())),
                _ => false,
            },
            Operator::Gte | Operator::Lte => {
                let (Some(actual), Some(bound)) = (self.actual(facts).as_f64(), wanted.as_f64())
                else {
                    return false;
                };
                match self.operator {
                    Operator::Gte => actual >= bound,
                    _ => actual <= bound,
                }
            }
            Operator::ChangedTo | Operator::ChangedFrom => {
                let Some(happening) = facts.happening else {
                    return false;
                };
                let to = self.operator == Operator::ChangedTo;
                if self.field == Field::Tags {
                    let list = if to {
                        &happening.tags_added
                    } else {
                        &happening.tags_removed
                    };
                    return wanted
                        .as_str()
                        .is_some_and(|tag| list.iter().any(|t| t == tag));
                }
                happening
                    .changes
                    .get(&self.field.name())
                    .is_some_and(|(from, after)| if to { after == wanted } else { from == wanted })
            }
        }
    }
}

/// `is` on a list (tags) is "has this one".
fn is(actual: &Value, wanted: &Value) -> bool {
    match actual {
        Value::Array(items) => items.contains(wanted),
        other => other == wanted,
    }
}

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
                format!("must be one of {}, customFields.<key>", known.join(", ")),
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
        Gte | Lte if !(field.is_time() || matches!(field, Field::CustomField(_))) => {
            return Err(bad_operator());
        }
        Contains
            if !matches!(
                field,
                Field::Subject | Field::VisitorEmail | Field::Tags | Field::CustomField(_)
            ) =>
        {
            return Err(bad_operator());
        }
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
        Field::Channel => match raw.as_str() {
            Some(c @ ("api" | "chat")) => Ok(json!(c)),
            _ => Err(value("must be api or chat")),
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
        Field::CustomField(_) => match (&raw, operator) {
            (Value::Number(_), Gte | Lte) => Ok(raw),
            (_, Gte | Lte) => Err(value("must be a number")),
            (Value::String(_), Contains) => Ok(raw),
            (_, Contains) => Err(value("must be text")),
            _ => Ok(raw),
        },
        _ => Err(bad_operator()),
    }
}

fn parsed<T: std::str::FromStr + Serialize>(raw: &Value) -> Option<Value> {
    raw.as_str()?.parse::<T>().ok().map(|v| json!(v))
}
