//! Durable background work. A change writes its jobs in its own transaction
//! (`enqueue`), so a job exists exactly when the change commits; workers on
//! every node claim due jobs with a lease and hand each to the handler
//! registered for its kind (webhook delivery, email, …).
//!
//! The queue is one table, `outbox_jobs`, and four operations: `claim`
//! (one statement; `FOR UPDATE SKIP LOCKED` on Postgres, the write lock of
//! `UPDATE … RETURNING` on SQLite), and `finish` / `retry` / `abandon`,
//! which end an attempt only while the claim's lease holds: the lease's
//! expiry is the claim's token. A worker that dies mid-job leaves the lease
//! to lapse and the job is claimed again (at-least-once).
//!
//! The outbox knows no job kind: handlers implement [`JobHandler`] in their
//! own area and the application registers them ([`Jobs::register`]).

mod runner;
pub mod store;

use std::time::Duration;

use serde::Serialize;
use uuid::Uuid;

use crate::auth::Tenant;
use crate::db::Tx;
use crate::error::StoreError;
use crate::time::new_id;

pub use runner::{JobHandler, Jobs, Started, run_due, spawn_workers, start_due};
pub use store::Job;

crate::text_enum! {
    /// Where a job stands.
    pub enum JobStatus {
        /// Due at its `run_at`, or claimed and running.
        Pending = "pending",
        Done = "done",
        /// Given up: no further attempt.
        Failed = "failed",
    }
}

/// When failed attempts are tried again: one schedule for every job kind.
#[derive(Debug, Clone)]
pub struct RetrySchedule {
    /// Delays before attempts 2, 3, …
    delays: Vec<Duration>,
}

impl RetrySchedule {
    pub fn new(delays: Vec<Duration>) -> Self {
        RetrySchedule { delays }
    }

    /// Attempts in all: the first plus one per retry delay.
    pub fn max_attempts(&self) -> i32 {
        i32::try_from(self.delays.len() + 1).unwrap_or(i32::MAX)
    }

    /// How long after attempt `attempt` (1-based) failed to try again;
    /// None once the schedule is used up.
    pub fn delay_after(&self, attempt: i32) -> Option<Duration> {
        let index = usize::try_from(attempt).ok()?.checked_sub(1)?;
        self.delays.get(index).copied()
    }
}

/// Enqueues a job of `kind`, due at once, inside `tx`; returns its id.
pub async fn enqueue(
    tx: &mut Tx,
    kind: &str,
    tenant: Option<&Tenant>,
    payload: &impl Serialize,
) -> Result<Uuid, StoreError> {
    let id = new_id();
    enqueue_as(tx, id, kind, tenant, payload).await?;
    Ok(id)
}

/// `enqueue` with the job's id chosen by the caller: a kind whose job stands
/// for a record of its own (a webhook delivery) gives the job that record's id.
pub async fn enqueue_as(
    tx: &mut Tx,
    id: Uuid,
    kind: &str,
    tenant: Option<&Tenant>,
    payload: &impl Serialize,
) -> Result<(), StoreError> {
    let payload = serde_json::to_value(payload)
        .map_err(|e| StoreError::Database(sqlx::Error::Encode(Box::new(e))))?;
    store::insert(tx, id, kind, tenant, &payload).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_read_back_from_their_column_spelling() {
        for status in [JobStatus::Pending, JobStatus::Done, JobStatus::Failed] {
            assert_eq!(status.as_str().parse::<JobStatus>(), Ok(status));
        }
    }

    #[test]
    fn the_schedule_ends_after_its_last_delay() {
        let schedule = RetrySchedule::new(vec![Duration::from_secs(1); 2]);
        assert_eq!(schedule.max_attempts(), 3);
        assert_eq!(schedule.delay_after(2), Some(Duration::from_secs(1)));
        assert!(schedule.delay_after(3).is_none());
    }
}
