//! The events of how tickets relate: linking, snoozing, merging and
//! splitting, each a payload of its own, and the one way they are recorded
//! and announced. Apart from `relations` (the links themselves), which the
//! ticket's model names.

use serde::Serialize;
use uuid::Uuid;

use crate::auth::Tenant;
use crate::db::Tx;
use crate::error::StoreError;
use crate::event_log::{EventName, EventPayload, emit_change};
use crate::live::{LiveEvent, TicketTopic};
use crate::model::Ticket;
use crate::relations::TicketLink;
use crate::time::Timestamp;

/// `ticket.linked`: the ticket whose link was made or removed, the link as
/// it sees it, and whether it was `added` or removed.
#[derive(Debug, Serialize)]
pub struct TicketLinked<'a> {
    #[serde(flatten)]
    pub ticket: &'a Ticket,
    pub link: &'a TicketLink,
    pub added: bool,
}

impl EventPayload for TicketLinked<'_> {
    const NAME: EventName = EventName::TicketLinked;
}

/// `ticket.unsnoozed`: the ticket, awake, and why (`due`,
/// `customer_reply` or `agent`).
#[derive(Debug, Serialize)]
pub struct TicketUnsnoozed<'a> {
    #[serde(flatten)]
    pub ticket: &'a Ticket,
    pub reason: WakeReason,
}

impl EventPayload for TicketUnsnoozed<'_> {
    const NAME: EventName = EventName::TicketUnsnoozed;
}

crate::text_enum! {
    /// Why a snoozed ticket woke.
    pub enum WakeReason {
        Due = "due",
        CustomerReply = "customer_reply",
        /// Woken by hand (`snoozedUntil: null`).
        Agent = "agent",
    }
}

/// `ticket.merged`: the merged (source) ticket, closed with `mergedInto`,
/// and the ticket it went into as `target`; `undone` on an undo.
#[derive(Debug, Serialize)]
pub struct TicketMerged<'a> {
    #[serde(flatten)]
    pub ticket: &'a Ticket,
    pub target: &'a Ticket,
    pub undone: bool,
}

impl EventPayload for TicketMerged<'_> {
    const NAME: EventName = EventName::TicketMerged;
}

/// `ticket.split`: the new ticket, the one it was split from and the
/// comments that moved.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TicketSplit<'a> {
    #[serde(flatten)]
    pub ticket: &'a Ticket,
    pub split_from: &'a Ticket,
    pub comment_ids: &'a [Uuid],
}

impl EventPayload for TicketSplit<'_> {
    const NAME: EventName = EventName::TicketSplit;
}

/// Records `data` about `ticket` (the change feed's entry is the ticket as
/// it now is) and stages it for the ticket's channels.
pub async fn announce<P: EventPayload>(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket: &Ticket,
    data: &P,
    now: Timestamp,
) -> Result<(), StoreError> {
    let change = crate::events::ticket_change(ticket)?;
    let event = emit_change(tx, tenant, data, Some(&change), now).await?;
    tx.announce(LiveEvent {
        topic: TicketTopic {
            tenant: *tenant,
            entity: Some(ticket.entity_id),
            internal: false,
            team: Vec::new(),
        },
        event,
    });
    Ok(())
}
