//! Waiting out the background work a service slice left queued.
//!
//! A request can queue work the service does after answering (a new
//! ticket queues the job that keeps its knowledge-base suggestions). That
//! work runs beside the load that queued it, and is counted there; left
//! queued when the slice ends, it would run on into the next slice and
//! take the CPU from whatever that slice measures (a baseline, or the next
//! scenario). So after each service slice the bench waits until no job is
//! due, and notes how long that took: the queued work's own cost, shown
//! rather than hidden in another measurement.

use std::time::{Duration, Instant};

use super::Ctx;
use crate::setup::{Sql, psql};

/// How long the bench waits for the queue to empty before it goes on
/// (and says so in the notes).
const SETTLE_AT_MOST: Duration = Duration::from_secs(300);

/// Jobs due now: pending, and not waiting out a retry or a schedule.
const DUE: &str = "SELECT count(*) FROM outbox_jobs \
                   WHERE status = 'pending' AND run_at <= now()";

impl Ctx {
    /// Waits until the service (still running) has done every job due;
    /// notes the wait when there was one. `what` names the slice.
    pub(super) async fn settle(&mut self, what: &str) -> anyhow::Result<()> {
        let started = Instant::now();
        let queued = self.jobs_due().await?;
        let mut due = queued;
        while due > 0 {
            if started.elapsed() > SETTLE_AT_MOST {
                self.notes.push(format!(
                    "{what}: {due} queued jobs still due after {} s; the next slice runs beside them",
                    SETTLE_AT_MOST.as_secs()
                ));
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
            due = self.jobs_due().await?;
        }
        if queued > 0 {
            self.notes.push(format!(
                "{what}: {queued} queued jobs were done in {:.1} s after the slice",
                started.elapsed().as_secs_f64()
            ));
        }
        Ok(())
    }

    async fn jobs_due(&self) -> anyhow::Result<u64> {
        Ok(psql(&self.database_url, Sql::Text(DUE), &[])
            .await?
            .parse()
            .unwrap_or(0))
    }
}
