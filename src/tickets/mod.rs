//! Tickets: the ticket API, comments, activity timeline, escalation.

pub mod routes;

use tokio::task::JoinHandle;

use crate::app::AppState;

/// Starts this node's ticket workers (escalation rules).
pub fn spawn_workers(_state: &AppState) -> Vec<JoinHandle<()>> {
    Vec::new()
}
