//! Automations: per company and mode, ordered rules that change tickets.
//! A `trigger` runs when a ticket event commits (`events` names which), a
//! `timed` one when time has passed (`minutesSince…` conditions). Both
//! share the conditions and actions parsed here; what runs them is
//! `engine` (given a transaction) and the service's passes above it.

pub mod actions;
mod apply;
pub mod chat;
pub mod conditions;
mod context;
pub mod engine;
mod happenings;
pub mod store;
pub mod timed;

use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

pub use actions::Action;
pub use conditions::{Conditions, Happening, TriggerEvent};

use crate::actor::{Actor, ActorType};
use crate::error::FieldError;
use crate::event_log::{EventName, EventPayload};
use crate::time::Timestamp;
use crate::validate::problem;

/// At most this many automations per company and mode.
pub const MAX_AUTOMATIONS: i64 = 500;

crate::text_enum! {
    /// When an automation runs.
    pub enum Kind {
        Trigger = "trigger",
        Timed = "timed",
    }
}

/// One automation as the API shows it and the engine reads it.
#[derive(Debug, Clone, Serialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Automation {
    pub id: Uuid,
    pub name: String,
    #[schema(value_type = String, example = "trigger")]
    pub kind: Kind,
    /// The events a trigger runs on (empty for a timed one).
    #[schema(value_type = Vec<String>)]
    pub events: Vec<TriggerEvent>,
    pub conditions: Conditions,
    /// `[{type, value}]`.
    #[schema(value_type = Vec<Object>)]
    pub actions: Vec<Action>,
    pub position: i64,
    pub enabled: bool,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Automation {
    /// Who its changes are made by.
    pub fn actor(&self) -> Actor {
        Actor {
            kind: ActorType::Automation,
            id: Some(self.id),
            name: self.name.clone(),
        }
    }
}

/// An automation as written (create, or update after merging).
#[derive(Debug, Clone)]
pub struct NewAutomation {
    pub name: String,
    pub kind: Kind,
    pub events: Vec<TriggerEvent>,
    pub conditions: Conditions,
    pub actions: Vec<Action>,
    /// None: after the last.
    pub position: Option<i64>,
    pub enabled: bool,
}

/// `events` for a rule of `kind`: a trigger names at least one, a timed
/// rule none.
pub fn parse_events(kind: Kind, raw: Option<&Value>) -> Result<Vec<TriggerEvent>, FieldError> {
    let items = match raw {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.clone(),
        Some(_) => return Err(problem("events", "must be an array of event names")),
    };
    let mut events = Vec::new();
    for item in &items {
        match item
            .as_str()
            .and_then(|name| name.parse::<TriggerEvent>().ok())
        {
            Some(event) if !events.contains(&event) => events.push(event),
            Some(_) => {}
            None => {
                return Err(problem(
                    "events",
                    format!("must name events among {}", TriggerEvent::NAMES.join(", ")),
                ));
            }
        }
    }
    match (kind, events.is_empty()) {
        (Kind::Trigger, true) => Err(problem("events", "a trigger names at least one event")),
        (Kind::Timed, false) => Err(problem("events", "a timed automation names no events")),
        _ => Ok(events),
    }
}

/// `automation.fired`: which automation changed which ticket (or, for a
/// `chat.started` trigger, which chat), on what.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AutomationFired<'a> {
    pub automation: AutomationRef<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ticket_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chat_session_id: Option<Uuid>,
    /// The event that ran a trigger, or `timed`.
    pub cause: &'a str,
    /// How many automations' changes led to this one (0: a person's or
    /// the service's change, or time).
    pub depth: usize,
}

#[derive(Debug, Serialize)]
pub struct AutomationRef<'a> {
    pub id: Uuid,
    pub name: &'a str,
}

impl EventPayload for AutomationFired<'_> {
    const NAME: EventName = EventName::AutomationFired;
}
