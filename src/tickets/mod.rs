//! Tickets: the ticket API, comments, activity timeline, escalation. The
//! model, the store, the events and the rules are the `supportdesk-tickets`
//! crate (re-exported here at the paths the service names them by).
//! `store::escalate` is the one way a ticket is escalated, by the API or by
//! an escalation rule.

mod actions;
mod activities;
mod bulk;
pub(crate) mod comments;
pub(crate) mod listing;
pub(crate) mod macros;
mod mentions;
mod nested;
mod reads;
mod related;
pub mod routes;
mod rules_pass;
pub(crate) mod sending;
mod snoozing;
pub(crate) mod update;
pub(crate) mod versions;
pub mod wake_pass;
mod writes;

pub use ::tickets::{Escalation, Ticket, delivery, events, model, payloads, relations, store};
pub use reads::TicketReads;
pub use writes::TicketWrites;

/// The escalation rules (the `supportdesk-tickets` crate's) and the pass
/// that applies them on this node.
pub mod rules {
    pub use super::rules_pass::{run_pass, run_pass_and_route, spawn};
    pub use ::tickets::rules::*;
}

use tokio::task::JoinHandle;

use crate::state::AppState;

/// Starts this node's ticket workers (escalation rules, the snooze wake
/// pass, the delivery of held and scheduled replies).
pub fn spawn_workers(state: &AppState) -> Vec<JoinHandle<()>> {
    let every = state.config.rules_interval;
    vec![
        rules::spawn(state.into(), every, state.shutdown.clone()),
        wake_pass::spawn(
            state.db.clone(),
            state.attachments.clone(),
            state.clock.clone(),
            state.shutdown.clone(),
        ),
        sending::spawn(
            state.db.clone(),
            state.attachments.clone(),
            state.clock.clone(),
            state.shutdown.clone(),
        ),
    ]
}
