//! Tickets: what a ticket is (`model`), its rows, comments, timeline, tags,
//! SLA clocks and escalation (`store`: `store::escalate` is the one way a
//! ticket is escalated, by the API or by an escalation rule), the events it
//! records (`events`, `payloads`) and the escalation rules (`rules`). The
//! routes, the rules' scheduler and the routing of a new ticket to a team
//! are the service's. An area crate: it depends on the floors below and the
//! components a ticket's transaction writes or reads only.

pub mod events;
pub mod model;
pub mod payloads;
pub mod rules;
pub mod store;

pub use model::{Escalation, Ticket};

// The floors below, at the paths the service names them by.
infra::area_floors!();

// The areas this one builds on.
#[allow(unused_imports)]
pub(crate) use ::attachments;
#[allow(unused_imports)]
pub(crate) use ::csat;
#[allow(unused_imports)]
pub(crate) use ::custom_fields;
#[allow(unused_imports)]
pub(crate) use ::mail;
#[allow(unused_imports)]
pub(crate) use ::sla;
#[allow(unused_imports)]
pub(crate) use ::tags;
#[allow(unused_imports)]
pub(crate) use ::teams;
#[allow(unused_imports)]
pub(crate) use ::users;
#[allow(unused_imports)]
pub(crate) use ::webhooks;

// The event log, under a name of its own: `events` is the tickets' own.
pub(crate) use ::events as event_log;
