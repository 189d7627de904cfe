//! What a condition looks at: the closed set of field names,
//! `customFields.<key>`, and the ticket's contact's and organisation's
//! fields (`contact.<name>`, `organization.<name>`).

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
    /// The score of the event's rating (`csat.submitted`, `csat.updated`),
    /// 1 to 5; `changed_from` reads the score a `csat.updated` replaced.
    CsatScore,
    /// The metric of the event's SLA warning or breach (`firstResponse`,
    /// `nextResponse`, `resolution`).
    SlaMetric,
    /// `customFields.<key>`.
    CustomField(String),
    MinutesSinceCreated,
    MinutesSinceUpdated,
    MinutesSinceCustomerReply,
    /// Whether the rule runs within the opening hours of a business-hours
    /// calendar (its id the value): `is` inside, `is_not` outside.
    WithinBusinessHours,
    /// A field of the ticket's contact or of the contact's organisation,
    /// by its name in the API (`customFields.<key>` among them); null when
    /// the ticket has none.
    Party(Party, String),
}

/// Whose field a `Field::Party` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Party {
    Contact,
    Organization,
}

impl Party {
    fn prefix(self) -> &'static str {
        match self {
            Party::Contact => "contact.",
            Party::Organization => "organization.",
        }
    }

    /// The fields of its record a condition may read (beside
    /// `customFields.<key>`).
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            Party::Contact => &[
                "name",
                "emails",
                "phone",
                "externalId",
                "organizationId",
                "tags",
            ],
            Party::Organization => &["name", "domains"],
        }
    }
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
    ("csatScore", Field::CsatScore),
    ("slaMetric", Field::SlaMetric),
    ("minutesSinceCreated", Field::MinutesSinceCreated),
    ("minutesSinceUpdated", Field::MinutesSinceUpdated),
    (
        "minutesSinceCustomerReply",
        Field::MinutesSinceCustomerReply,
    ),
    ("withinBusinessHours", Field::WithinBusinessHours),
];

const CUSTOM_PREFIX: &str = "customFields.";

impl Field {
    pub fn parse(name: &str) -> Option<Field> {
        if let Some(key) = name.strip_prefix(CUSTOM_PREFIX) {
            return (!key.is_empty()).then(|| Field::CustomField(key.to_string()));
        }
        for party in [Party::Contact, Party::Organization] {
            if let Some(path) = name.strip_prefix(party.prefix()) {
                let custom = path
                    .strip_prefix(CUSTOM_PREFIX)
                    .is_some_and(|key| !key.is_empty());
                return (custom || party.fields().contains(&path))
                    .then(|| Field::Party(party, path.to_string()));
            }
        }
        NAMED
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| f.clone())
    }

    pub fn name(&self) -> String {
        match self {
            Field::CustomField(key) => format!("{CUSTOM_PREFIX}{key}"),
            Field::Party(party, path) => format!("{}{path}", party.prefix()),
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

    /// A custom field's value (the ticket's, its contact's or its
    /// organisation's): any JSON, numbers compared with `gte`/`lte`.
    pub fn is_custom(&self) -> bool {
        match self {
            Field::CustomField(_) => true,
            Field::Party(_, path) => path.starts_with(CUSTOM_PREFIX),
            _ => false,
        }
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
                | Field::CsatScore
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
