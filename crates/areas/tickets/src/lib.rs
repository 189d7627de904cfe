//! Tickets: what a ticket is (`model`), its rows, comments, timeline, tags,
//! SLA clocks and escalation (`store`: `store::escalate` is the one way a
//! ticket is escalated, by the API or by an escalation rule), the events it
//! records (`events`, `payloads`), the escalation rules (`rules`) and the
//! macros agents apply to a ticket (`macros`: kept, previewed, applied
//! through the store's update and comment steps). The
//! routes, the rules' scheduler and the routing of a new ticket to a team
//! are the service's. An area crate: it depends on the floors below and the
//! components a ticket's transaction writes or reads only.

pub mod automations;
pub mod delivery;
pub mod events;
pub mod macros;
pub mod mentions;
pub mod model;
pub mod payloads;
pub mod relation_events;
pub mod relations;
pub mod rules;
pub mod store;
pub mod views;

pub use model::{Escalation, Ticket};

// The floors below, at the paths the service names them by.
infra::area_floors!();

// The areas this one builds on.
pub(crate) use ::attachments;
pub(crate) use ::audit;
pub(crate) use ::csat;
pub(crate) use ::custom_fields;
pub(crate) use ::mail;
pub(crate) use ::sla;
pub(crate) use ::tags;
pub(crate) use ::teams;
pub(crate) use ::webhooks;

// The event log, under a name of its own: `events` is the tickets' own.
pub(crate) use ::events as event_log;
