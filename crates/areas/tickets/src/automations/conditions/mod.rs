//! An automation's conditions: `{"all": [...], "any": [...]}` of
//! `{field, operator, value}`, parsed once on write into values that can
//! only be valid, and checked against a ticket (and, for a trigger, what
//! changed in the event that ran it).

mod eval;
mod field;
mod parse;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use crate::actor::Actor;
use crate::model::{AuthorType, Ticket};
use crate::time::Timestamp;

pub use eval::LeastMinutes;
pub use field::{Field, Party};
pub use parse::parse;

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
    /// The events a trigger runs on: a ticket's, and those of its chat
    /// (on each ticket opened from the chat), of its SLA clocks, of an
    /// email that became it or a comment on it, and a rating of it or of
    /// its chat, first or changed.
    pub enum TriggerEvent {
        TicketCreated = "ticket.created",
        TicketUpdated = "ticket.updated",
        CommentCreated = "comment.created",
        /// A chat that just started: its triggers read and change the
        /// chat (`automations::chat`).
        ChatStarted = "chat.started",
        ChatClosed = "chat.closed",
        SlaWarning = "sla.warning",
        SlaBreached = "sla.breached",
        EmailReceived = "email.received",
        CsatSubmitted = "csat.submitted",
        /// A rating changed after the first (within its change window).
        CsatUpdated = "csat.updated",
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
    /// Nil for a chat's event until it is run on each ticket of the chat.
    pub ticket_id: Uuid,
    /// The chat of a chat's event.
    pub chat_session_id: Option<Uuid>,
    /// Who made it (None on events written before changes named one).
    pub actor: Option<Actor>,
    /// `{field name: (from, to)}` of the fields it changed.
    pub changes: BTreeMap<String, (Value, Value)>,
    pub tags_added: Vec<String>,
    pub tags_removed: Vec<String>,
    /// The comment of a `comment.created`: its author type and whether it
    /// is an internal note.
    pub comment: Option<(AuthorType, bool)>,
    /// The score of a `csat.submitted`'s or `csat.updated`'s rating.
    pub csat_score: Option<i64>,
    /// The metric of an `sla.warning` or `sla.breached`.
    pub sla_metric: Option<String>,
    /// The automation whose change this is: it never runs on it again.
    pub by_rule: Option<Uuid>,
}

/// What a rule reads and changes: a ticket, or a chat that just started
/// (a `chat.started` trigger's).
#[derive(Clone, Copy)]
pub enum Subject<'a> {
    Ticket(&'a Ticket),
    Chat(&'a ChatFacts),
}

/// What a `chat.started` trigger's conditions read of a chat session.
#[derive(Debug, Clone)]
pub struct ChatFacts {
    pub id: Uuid,
    pub entity_id: Uuid,
    pub team_id: Option<Uuid>,
    pub assignee_id: Option<Uuid>,
    pub visitor_email: Option<String>,
    pub tags: Vec<String>,
    pub contact_id: Option<Uuid>,
}

/// What conditions are checked against.
pub struct Facts<'a> {
    pub subject: Subject<'a>,
    pub now: Timestamp,
    pub last_customer_reply: Option<Timestamp>,
    pub happening: Option<&'a Happening>,
    /// The ticket's contact and its organisation as the API shows them
    /// (read only for a rule with a `contact.…`/`organization.…`
    /// condition).
    pub contact: Option<&'a Value>,
    pub organization: Option<&'a Value>,
    /// Those of the calendars the rule's `withinBusinessHours` conditions
    /// name that are open at `now`.
    pub open_calendars: &'a [Uuid],
}
