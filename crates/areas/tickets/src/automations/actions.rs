//! An automation's actions: `[{type, value}]`, a closed set, parsed once
//! on write.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use super::conditions::MINUTES_MAX;
use crate::error::FieldError;
use crate::model::{COMMENT_MAX, Priority, TicketStatus};
use crate::validate::problem;

/// At most this many actions per automation.
pub const ACTIONS_MAX: usize = 20;

/// One action, `{"type": "set_status", "value": "PENDING"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
pub enum Action {
    SetStatus(TicketStatus),
    SetPriority(Priority),
    /// A user of the company; null unassigns.
    SetAssignee(Option<Uuid>),
    /// A team of the company; null takes the ticket out of its team.
    SetTeam(Option<Uuid>),
    AddTags(Vec<String>),
    RemoveTags(Vec<String>),
    /// `{key, value}`: one custom field (null clears it).
    SetCustomField(SetField),
    /// A shared macro of the company.
    ApplyMacro(Uuid),
    /// An internal note; the macros' placeholders apply.
    AddNote(String),
    /// An email through the outbox: `to` is `requester` or an address.
    Email(EmailAction),
    /// A webhook of the company: the rule's `automation.fired` is
    /// delivered to it (signed, retried and logged as any delivery),
    /// whatever events it subscribes to.
    Webhook(Uuid),
    /// Snoozes the ticket for `minutes` from when the rule fires.
    Snooze(SnoozeFor),
    /// Closes the chat the ticket was opened from, if it is open (no
    /// value).
    CloseChat,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnoozeFor {
    pub minutes: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetField {
    pub key: String,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmailAction {
    pub to: String,
    pub subject: String,
    pub body: String,
}

/// Parses `[{type, value}]`: every problem, each named by its place.
pub fn parse(raw: Option<&Value>) -> Result<Vec<Action>, Vec<FieldError>> {
    let items = match raw {
        Some(Value::Array(items)) if !items.is_empty() => items,
        _ => {
            return Err(vec![problem(
                "actions",
                "must be a non-empty array of {type, value}",
            )]);
        }
    };
    let mut problems = Vec::new();
    let mut actions = Vec::new();
    if items.len() > ACTIONS_MAX {
        problems.push(problem("actions", format!("at most {ACTIONS_MAX} actions")));
    }
    for (i, item) in items.iter().enumerate() {
        let field = format!("actions[{i}]");
        match one(item) {
            Ok(action) => actions.push(action),
            Err(message) => problems.push(problem(&field, message)),
        }
    }
    match problems.is_empty() {
        true => Ok(actions),
        false => Err(problems),
    }
}

fn one(item: &Value) -> Result<Action, String> {
    let action: Action = serde_json::from_value(item.clone()).map_err(|err| {
        format!(
            "{err}; types: set_status, set_priority, set_assignee, set_team, add_tags, \
             remove_tags, set_custom_field, apply_macro, add_note, email, webhook, snooze, close_chat"
        )
    })?;
    let tags = |tags: &[String]| {
        crate::tags::model::tag_set("tags", &serde_json::json!(tags)).map_err(|e| e.message)
    };
    Ok(match action {
        Action::AddTags(list) => Action::AddTags(tags(&list)?),
        Action::RemoveTags(list) => Action::RemoveTags(tags(&list)?),
        Action::AddNote(text) => {
            let text = text.trim().to_string();
            if text.is_empty() || text.chars().count() > COMMENT_MAX {
                return Err(format!("a note is 1 to {COMMENT_MAX} characters"));
            }
            let unknown = crate::macros::unknown_placeholders(&text);
            if let Some(name) = unknown.first() {
                return Err(format!("unknown placeholder {{{{{name}}}}}"));
            }
            Action::AddNote(text)
        }
        Action::Email(email) => {
            let to = email.to.trim().to_string();
            if to != "requester" && !(to.contains('@') && to.len() <= 254) {
                return Err("email.to must be requester or an email address".into());
            }
            if email.subject.trim().is_empty() || email.body.trim().is_empty() {
                return Err("email needs a subject and a body".into());
            }
            Action::Email(EmailAction { to, ..email })
        }
        Action::Snooze(snooze) => {
            if !(1..=MINUTES_MAX).contains(&snooze.minutes) {
                return Err(format!(
                    "snooze.minutes must be a whole number, 1 to {MINUTES_MAX}"
                ));
            }
            Action::Snooze(snooze)
        }
        other => other,
    })
}
