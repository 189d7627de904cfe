//! Tickets: the ticket API, comments, activity timeline, escalation.
//! `store::escalate` is the one way a ticket is escalated, by the API or by
//! an escalation rule.

mod activities;
pub(crate) mod comments;
pub mod events;
mod listing;
pub mod model;
mod nested;
pub mod payloads;
pub mod routes;
pub mod rules;
pub mod store;

use tokio::task::JoinHandle;

use crate::state::AppState;

pub use model::{Escalation, Ticket};

/// Starts this node's ticket workers (escalation rules).
pub fn spawn_workers(state: &AppState) -> Vec<JoinHandle<()>> {
    vec![rules::spawn(state)]
}
