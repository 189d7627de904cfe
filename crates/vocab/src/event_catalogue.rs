//! The catalogue of domain events: their names (with the wire spelling) and
//! the shape of one event. It sits at the bottom of the module graph so that
//! the areas that record events (`events`) and the ones that deliver them
//! (`webhooks`) can both name them without importing each other.

use serde::Serialize;
use uuid::Uuid;

use crate::actor::Actor;
use crate::time::Timestamp;

crate::text_enum! {
    /// Every event a webhook can subscribe to, with its wire spelling
    /// (`ticket.created`), as receivers and the API see it.
    pub enum EventName {
        TicketCreated = "ticket.created",
        TicketUpdated = "ticket.updated",
        TicketResolved = "ticket.resolved",
        TicketEscalated = "ticket.escalated",
        CommentCreated = "comment.created",
        UserCreated = "user.created",
        ChatAssigned = "chat.assigned",
        /// A chat session started (created, by a visitor's widget or a key).
        ChatStarted = "chat.started",
        /// A chat session closed (by a person or an automation).
        ChatClosed = "chat.closed",
        SlaWarning = "sla.warning",
        SlaBreached = "sla.breached",
        SlaFulfilled = "sla.fulfilled",
        CsatSubmitted = "csat.submitted",
        CsatUpdated = "csat.updated",
        /// A macro applied to a ticket, after the ticket's own events of
        /// the same change.
        MacroApplied = "macro.applied",
        TicketLinked = "ticket.linked",
        TicketUnsnoozed = "ticket.unsnoozed",
        TicketMerged = "ticket.merged",
        TicketSplit = "ticket.split",
        ContactCreated = "contact.created",
        ContactMerged = "contact.merged",
        /// An automation changed a ticket (after the ticket's own events).
        AutomationFired = "automation.fired",
        /// A contact's personal data erased: only the contact's id.
        ContactErased = "contact.erased",
        /// An incoming email became a ticket or a comment.
        EmailReceived = "email.received",
        /// A delivery failure report marked an address undeliverable.
        EmailBounced = "email.bounced",
        /// An audit entry, once sealed into its company's chain (for SIEM
        /// forwarding; sent only to webhooks that name it).
        AuditEntry = "audit.entry",
    }
}

/// The wire spellings of [`EventName::ALL`], in the same order.
pub const EVENT_NAMES: &[&str] = EventName::NAMES;

/// The data of one kind of event. Each payload type names the event it is
/// the data of, so recording an event takes its name from its payload and
/// an event cannot be recorded with another event's data.
pub trait EventPayload: Serialize {
    const NAME: EventName;
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
    /// Who made the change.
    pub actor: Actor,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_from_its_wire_spelling() {
        for name in EventName::ALL {
            assert_eq!(name.as_str().parse::<EventName>(), Ok(*name));
        }
    }

    #[test]
    fn the_wire_list_follows_the_enum() {
        let spelled: Vec<&str> = EventName::ALL.iter().map(|e| e.as_str()).collect();
        assert_eq!(spelled, EVENT_NAMES);
    }
}
