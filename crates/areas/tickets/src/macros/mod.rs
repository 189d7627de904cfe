//! Macros: a named set of changes and replies an agent applies to a ticket
//! in one step (one transaction, one set of events). A personal macro is
//! its agent's alone; a shared one is the tenant's. What a macro is, its
//! placeholders and how they read a ticket are here; `store` keeps them,
//! `apply` applies one (or shows what it would do) through the ticket
//! update and comment steps every other write uses.

pub mod apply;
pub mod store;

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use uuid::Uuid;

use crate::custom_fields::model::FieldPatch;
use crate::model::{Priority, Ticket, TicketStatus};
use crate::time::Timestamp;

crate::text_enum! {
    /// Who sees a macro: its owner alone, or every agent of the tenant.
    pub enum Visibility {
        Personal = "personal",
        Shared = "shared",
    }
}

/// At most this many macros per company and mode.
pub const MAX_MACROS: i64 = 1_000;
pub const DESCRIPTION_MAX: usize = 1_000;

/// A macro as the API shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Macro {
    pub id: Uuid,
    pub name: String,
    pub description: Option<String>,
    /// `personal` (its owner alone sees and applies it) or `shared`.
    #[schema(value_type = String, example = "shared")]
    pub visibility: Visibility,
    /// The agent a personal macro belongs to; null for a shared one.
    pub owner_id: Option<Uuid>,
    pub actions: Actions,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// A macro to write.
#[derive(Debug, Clone)]
pub struct NewMacro {
    pub name: String,
    pub description: Option<String>,
    pub visibility: Visibility,
    /// Set exactly when `visibility` is personal.
    pub owner_id: Option<Uuid>,
    pub actions: Actions,
}

/// What a macro does, each part optional (at least one is set, checked on
/// write). Stored as this JSON.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, utoipa::ToSchema)]
#[schema(as = MacroActions)]
#[serde(rename_all = "camelCase")]
pub struct Actions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = crate::openapi::schema::ticket_status)]
    pub status: Option<TicketStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = crate::openapi::schema::ticket_priority)]
    pub priority: Option<Priority>,
    /// A user of the company; null unassigns.
    #[serde(default, skip_serializing_if = "Set::is_keep")]
    #[schema(value_type = Option<Uuid>)]
    pub assigned_to_id: Set<Uuid>,
    /// A team of the company; null takes the ticket out of its team.
    #[serde(default, skip_serializing_if = "Set::is_keep")]
    #[schema(value_type = Option<Uuid>)]
    pub team_id: Set<Uuid>,
    /// Tags added (normalised as on a ticket).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub add_tags: Vec<String>,
    /// Tags removed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_tags: Vec<String>,
    /// Custom field values set (null clears one), by key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schema(value_type = Option<Object>)]
    pub custom_fields: FieldPatch,
    /// A public reply, with placeholders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
    /// An internal note, with placeholders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Actions {
    pub fn is_empty(&self) -> bool {
        *self == Actions::default()
    }
}

/// A field a macro may set to a value or clear, or leave as it is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Set<T> {
    #[default]
    Keep,
    Clear,
    To(T),
}

impl<T> Set<T> {
    pub fn is_keep(&self) -> bool {
        matches!(self, Set::Keep)
    }

    /// As a ticket update's field: None keeps, Some(None) clears.
    pub fn as_update(&self) -> Option<Option<T>>
    where
        T: Copy,
    {
        match self {
            Set::Keep => None,
            Set::Clear => Some(None),
            Set::To(value) => Some(Some(*value)),
        }
    }
}

impl<T: Serialize> Serialize for Set<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Set::To(value) => value.serialize(serializer),
            Set::Keep | Set::Clear => serializer.serialize_none(),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Set<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Option::<T>::deserialize(deserializer)?.map_or(Set::Clear, Set::To))
    }
}

/// The placeholders a reply or note may hold; `ticket.customFields.<key>`
/// beside them reads a custom field (empty when unset).
pub const PLACEHOLDERS: &[&str] = &[
    "ticket.number",
    "ticket.subject",
    "ticket.status",
    "ticket.priority",
    "requester.name",
    "requester.email",
    "agent.name",
];
const CUSTOM_FIELD_PREFIX: &str = "ticket.customFields.";

/// The placeholders in `text` (`{{ name }}`, spaces allowed) that are not
/// known, in order; empty when every one is.
pub fn unknown_placeholders(text: &str) -> Vec<String> {
    let mut unknown = Vec::new();
    for_each_placeholder(text, |name| {
        let known = PLACEHOLDERS.contains(&name)
            || name
                .strip_prefix(CUSTOM_FIELD_PREFIX)
                .is_some_and(|key| !key.is_empty());
        if !known {
            unknown.push(name.to_string());
        }
        String::new()
    });
    unknown
}

/// `text` with each placeholder replaced by the ticket's value, the
/// acting agent's name for `agent.name`.
pub fn render(text: &str, ticket: &Ticket, agent_name: &str) -> String {
    for_each_placeholder(text, |name| match name {
        "ticket.number" => ticket.ticket_number.clone(),
        "ticket.subject" => ticket.subject.clone(),
        "ticket.status" => ticket.status.to_string(),
        "ticket.priority" => ticket.priority.to_string(),
        "requester.name" => requester_name(ticket),
        "requester.email" => ticket.visitor_email.clone().unwrap_or_default(),
        "agent.name" => agent_name.to_string(),
        other => other
            .strip_prefix(CUSTOM_FIELD_PREFIX)
            .and_then(|key| ticket.custom_fields.get(key))
            .map(|value| match value {
                serde_json::Value::String(text) => text.clone(),
                other => other.to_string(),
            })
            .unwrap_or_default(),
    })
}

/// Who asked: the chat visitor's name, else the address the ticket's
/// emails go to, else nothing.
fn requester_name(ticket: &Ticket) -> String {
    match (&ticket.visitor, &ticket.visitor_email) {
        (Some(visitor), _) => visitor.name.clone(),
        (None, Some(email)) => email.clone(),
        (None, None) => String::new(),
    }
}

/// `text` with each `{{ name }}` replaced by `value(name)`; an opening
/// without its closing is kept as written.
fn for_each_placeholder(text: &str, mut value: impl FnMut(&str) -> String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start + 2..].find("}}") else {
            break;
        };
        out.push_str(&rest[..start]);
        out.push_str(&value(rest[start + 2..start + 2 + len].trim()));
        rest = &rest[start + 2 + len + 2..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_placeholders_are_named_and_known_ones_pass() {
        let text = "Hi {{requester.name}}, {{ ticket.number }} {{ticket.customFields.plan}} \
                    {{agent.nme}} {{ticket.customFields.}}";
        assert_eq!(
            unknown_placeholders(text),
            vec!["agent.nme".to_string(), "ticket.customFields.".to_string()]
        );
    }

    #[test]
    fn an_unclosed_placeholder_is_kept_as_written() {
        assert!(unknown_placeholders("price {{ 5").is_empty());
    }

    #[test]
    fn set_reads_null_as_clear_and_a_value_as_to() {
        let actions: Actions = serde_json::from_str(
            r#"{"assignedToId": null, "teamId": "00000000-0000-0000-0000-000000000001"}"#,
        )
        .expect("actions");
        assert_eq!(actions.assigned_to_id, Set::Clear);
        assert!(matches!(actions.team_id, Set::To(_)));
        let back = serde_json::to_value(&actions).expect("json");
        assert_eq!(back["assignedToId"], serde_json::Value::Null);
        assert!(back.get("status").is_none());
    }
}
