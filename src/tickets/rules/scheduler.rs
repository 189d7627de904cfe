//! The escalation rules scheduler: every `rules_interval` each node tries
//! to run a pass; on Postgres an advisory lock lets one node run it at a
//! time. `run_pass` is public so tests drive it step by step.

use std::time::Duration;

use tokio::task::JoinHandle;

use super::store;
use crate::db::Db;
use crate::error::StoreError;
use crate::state::AppState;

/// At most this many tickets per rule per pass; the rest wait for the next.
pub const BATCH: i64 = 500;

/// Evaluates every enabled rule of every tenant once, with one query per
/// rule, and escalates each matching ticket (in its own transaction, with
/// the firing recorded in it). Returns how many escalations it made; 0 when
/// another node holds the pass.
pub async fn run_pass(db: &Db) -> Result<usize, StoreError> {
    let Some(lock) = store::lock_pass(db).await? else {
        return Ok(0);
    };
    let rules = store::enabled_rules(db).await?;
    let mut fired = 0;
    for (tenant, rule) in &rules {
        let tickets = match store::matching_tickets(db, tenant, rule, BATCH).await {
            Ok(tickets) => tickets,
            Err(err) => {
                tracing::warn!(rule = %rule.id, error = %err, "escalation rule not evaluated");
                continue;
            }
        };
        for ticket in tickets {
            match store::fire(db, tenant, rule, ticket).await {
                Ok(true) => fired += 1,
                Ok(false) => {}
                Err(err) => {
                    tracing::warn!(rule = %rule.id, %ticket, error = %err, "escalation rule failed");
                }
            }
        }
    }
    lock.release().await;
    Ok(fired)
}

/// Runs a pass every `rules_interval` (the first at once) until shutdown.
/// A pass interrupted by shutdown rolls back what it had not committed.
pub fn spawn(state: &AppState) -> JoinHandle<()> {
    let db = state.db.clone();
    let every = state.config.rules_interval.max(Duration::from_millis(10));
    let first = tokio::time::Instant::now();
    crate::time::every(state.shutdown.clone(), first, every, move || {
        let db = db.clone();
        async move {
            match run_pass(&db).await {
                Ok(0) => {}
                Ok(fired) => tracing::info!(fired, "escalation rules fired"),
                Err(err) => tracing::warn!(error = %err, "escalation rules pass failed"),
            }
        }
    })
}
