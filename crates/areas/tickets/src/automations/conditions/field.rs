//! What a condition looks at: the closed set of field names, and
//! `customFields.<key>`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

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

pub(super) const NAMED: &[(&str, Field)] = &[
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
    pub(super) fn changes(&self) -> bool {
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
