//! Checking conditions against a ticket and, for a trigger, what changed
//! in the event that ran it.

use serde_json::{Value, json};

use uuid::Uuid;

use super::{ChatFacts, Condition, Conditions, Facts, Field, Operator, Party, Subject};
use crate::time::Timestamp;

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

    /// Whether any condition reads the ticket's contact or organisation.
    pub fn reads_party(&self) -> bool {
        self.all
            .iter()
            .chain(&self.any)
            .any(|c| matches!(c.field, Field::Party(..)))
    }

    /// The business-hours calendars the conditions name.
    pub fn calendars(&self) -> Vec<Uuid> {
        let mut ids: Vec<Uuid> = self
            .all
            .iter()
            .chain(&self.any)
            .filter(|c| c.field == Field::WithinBusinessHours)
            .filter_map(calendar_of)
            .collect();
        ids.sort();
        ids.dedup();
        ids
    }

    /// The least minutes since creation, since the last update and since
    /// the customer's last reply that `all` requires (`gte`): a timed pass
    /// reads only tickets that old, through the indexes on those times.
    pub fn least_minutes(&self) -> LeastMinutes {
        let least = |field: Field| {
            self.all
                .iter()
                .filter(|c| c.field == field && c.operator == Operator::Gte)
                .filter_map(|c| c.value.as_i64())
                .max()
        };
        LeastMinutes {
            created: least(Field::MinutesSinceCreated),
            updated: least(Field::MinutesSinceUpdated),
            customer_reply: least(Field::MinutesSinceCustomerReply),
        }
    }
}

/// What [`Conditions::least_minutes`] finds: each None when `all` sets no
/// least age on that time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LeastMinutes {
    pub created: Option<i64>,
    pub updated: Option<i64>,
    pub customer_reply: Option<i64>,
}

fn calendar_of(condition: &Condition) -> Option<Uuid> {
    condition.value.as_str()?.parse().ok()
}

fn minutes_since(now: Timestamp, then: Timestamp) -> i64 {
    (now.0 - then.0).num_minutes()
}

impl Condition {
    fn actual(&self, facts: &Facts) -> Value {
        let t = match facts.subject {
            Subject::Ticket(ticket) => ticket,
            Subject::Chat(chat) => return self.on_chat(chat, facts),
        };
        match &self.field {
            Field::Status => json!(t.status),
            Field::Priority => json!(t.priority),
            Field::AssignedToId => json!(t.assigned_to_id),
            Field::TeamId => json!(t.team_id),
            Field::EntityId => json!(t.entity_id),
            Field::Subject => json!(t.subject),
            Field::VisitorEmail => json!(t.visitor_email),
            Field::Tags => json!(t.tags),
            Field::Channel => json!(t.channel),
            Field::CustomField(key) => t.custom_fields.get(key).cloned().unwrap_or(Value::Null),
            Field::MinutesSinceCreated => json!(minutes_since(facts.now, t.created_at)),
            Field::MinutesSinceUpdated => json!(minutes_since(facts.now, t.updated_at)),
            Field::MinutesSinceCustomerReply => json!(
                facts
                    .last_customer_reply
                    .map(|at| minutes_since(facts.now, at))
            ),
            _ => self.of_event(facts),
        }
    }

    /// What a `chat.started` trigger's condition reads of the chat; what
    /// a chat does not have is null (such a rule names none of it).
    fn on_chat(&self, chat: &ChatFacts, facts: &Facts) -> Value {
        match &self.field {
            Field::EntityId => json!(chat.entity_id),
            Field::TeamId => json!(chat.team_id),
            Field::AssignedToId => json!(chat.assignee_id),
            Field::VisitorEmail => json!(chat.visitor_email),
            Field::Tags => json!(chat.tags),
            Field::Channel => json!("chat"),
            Field::Status
            | Field::Priority
            | Field::Subject
            | Field::CustomField(_)
            | Field::MinutesSinceCreated
            | Field::MinutesSinceUpdated
            | Field::MinutesSinceCustomerReply => Value::Null,
            _ => self.of_event(facts),
        }
    }

    /// What a condition reads of the event, the time and the parties,
    /// whatever the rule's subject.
    fn of_event(&self, facts: &Facts) -> Value {
        let happening = facts.happening;
        match &self.field {
            Field::ActorType => json!(happening.and_then(|h| h.actor.as_ref()).map(|a| a.kind)),
            Field::CommentAuthorType => json!(happening.and_then(|h| h.comment).map(|c| c.0)),
            Field::CommentInternal => json!(happening.and_then(|h| h.comment).map(|c| c.1)),
            Field::CsatScore => json!(happening.and_then(|h| h.csat_score)),
            Field::SlaMetric => json!(happening.and_then(|h| h.sla_metric.as_deref())),
            Field::WithinBusinessHours => {
                json!(calendar_of(self).is_some_and(|id| facts.open_calendars.contains(&id)))
            }
            Field::Party(party, path) => {
                let record = match party {
                    Party::Contact => facts.contact,
                    Party::Organization => facts.organization,
                };
                let found = match path.split_once('.') {
                    Some((group, key)) => record.and_then(|r| r.get(group)?.get(key)),
                    None => record.and_then(|r| r.get(path)),
                };
                found.cloned().unwrap_or(Value::Null)
            }
            _ => Value::Null,
        }
    }

    pub fn holds(&self, facts: &Facts) -> bool {
        let wanted = &self.value;
        if self.field == Field::WithinBusinessHours {
            // Its value names the calendar; what it compares is whether
            // that calendar is open.
            let open = self.actual(facts) == Value::Bool(true);
            return (self.operator == Operator::Is) == open;
        }
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
