//! The snooze wake pass: every second each node tries one; on Postgres an
//! advisory lock lets one node run it at a time, and each wake is a
//! conditional UPDATE (`tickets::store::wake_due`), so a snoozed ticket
//! wakes once, within a second of its time. Tests run `wake_due` with the
//! clock moved forward instead of waiting for this loop.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::attachments::Attachments;
use crate::db::Db;
use crate::time::Clock;

/// How often a node looks for snoozes that are due.
const EVERY: Duration = Duration::from_secs(1);

/// Runs a pass every second (the first at once) until shutdown.
pub fn spawn(
    db: Db,
    attachments: Arc<Attachments>,
    clock: Clock,
    shutdown: watch::Receiver<bool>,
) -> JoinHandle<()> {
    let first = tokio::time::Instant::now();
    crate::time::every(shutdown, first, EVERY, move || {
        let (db, attachments, now) = (db.clone(), attachments.clone(), clock.now());
        async move {
            let signer = attachments.signer(now);
            match super::store::wake_due(&db, now, &signer).await {
                Ok(0) => {}
                Ok(woke) => tracing::info!(woke, "snoozed tickets woken"),
                Err(err) => tracing::warn!(error = %err, "snooze wake pass failed"),
            }
        }
    })
}
