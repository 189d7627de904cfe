//! The catalogue of domain events: their names (with the wire spelling) and
//! the shape of one event. It sits at the bottom of the module graph so that
//! the areas that record events (`events`) and the ones that deliver them
//! (`webhooks`) can both name them without importing each other.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use uuid::Uuid;

use crate::time::Timestamp;

/// Every event a webhook can subscribe to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventName {
    TicketCreated,
    TicketUpdated,
    TicketResolved,
    TicketEscalated,
    CommentCreated,
    UserCreated,
    ChatAssigned,
    SlaWarning,
    SlaBreached,
    SlaFulfilled,
    CsatSubmitted,
    CsatUpdated,
}

impl EventName {
    pub const ALL: [EventName; 12] = [
        EventName::TicketCreated,
        EventName::TicketUpdated,
        EventName::TicketResolved,
        EventName::TicketEscalated,
        EventName::CommentCreated,
        EventName::UserCreated,
        EventName::ChatAssigned,
        EventName::SlaWarning,
        EventName::SlaBreached,
        EventName::SlaFulfilled,
        EventName::CsatSubmitted,
        EventName::CsatUpdated,
    ];

    /// The wire spelling (`ticket.created`), as receivers and the API see it.
    pub const fn as_str(self) -> &'static str {
        match self {
            EventName::TicketCreated => "ticket.created",
            EventName::TicketUpdated => "ticket.updated",
            EventName::TicketResolved => "ticket.resolved",
            EventName::TicketEscalated => "ticket.escalated",
            EventName::CommentCreated => "comment.created",
            EventName::UserCreated => "user.created",
            EventName::ChatAssigned => "chat.assigned",
            EventName::SlaWarning => "sla.warning",
            EventName::SlaBreached => "sla.breached",
            EventName::SlaFulfilled => "sla.fulfilled",
            EventName::CsatSubmitted => "csat.submitted",
            EventName::CsatUpdated => "csat.updated",
        }
    }
}

/// The wire spellings of [`EventName::ALL`], in the same order.
pub const EVENT_NAMES: &[&str] = &[
    EventName::TicketCreated.as_str(),
    EventName::TicketUpdated.as_str(),
    EventName::TicketResolved.as_str(),
    EventName::TicketEscalated.as_str(),
    EventName::CommentCreated.as_str(),
    EventName::UserCreated.as_str(),
    EventName::ChatAssigned.as_str(),
    EventName::SlaWarning.as_str(),
    EventName::SlaBreached.as_str(),
    EventName::SlaFulfilled.as_str(),
    EventName::CsatSubmitted.as_str(),
    EventName::CsatUpdated.as_str(),
];

impl fmt::Display for EventName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not in the catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownEvent(pub String);

impl fmt::Display for UnknownEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown event {:?}", self.0)
    }
}

impl std::error::Error for UnknownEvent {}

impl FromStr for EventName {
    type Err = UnknownEvent;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        EventName::ALL
            .into_iter()
            .find(|event| event.as_str() == name)
            .ok_or_else(|| UnknownEvent(name.to_string()))
    }
}

impl Serialize for EventName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// One recorded event.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub id: Uuid,
    pub name: EventName,
    pub tenant_company: Uuid,
    pub timestamp: Timestamp,
    pub data: serde_json::Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_from_its_wire_spelling() {
        for name in EventName::ALL {
            assert_eq!(name.as_str().parse::<EventName>(), Ok(name));
        }
    }

    #[test]
    fn the_wire_list_follows_the_enum() {
        let spelled: Vec<&str> = EventName::ALL.iter().map(|e| e.as_str()).collect();
        assert_eq!(spelled, EVENT_NAMES);
    }
}
