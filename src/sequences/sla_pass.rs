//! The SLA pass: every `rules_interval` each node tries one; on Postgres an
//! advisory lock lets one node run it at a time. It spans two areas, in one
//! transaction per clock: the SLA claims a due warning or breach
//! (`sla::clocks::due`), and the ticket records it (timeline entry and
//! `sla.*` event, `tickets::store::record_sla`), so a claim exists exactly
//! when its record does. `run_pass` takes "now" so tests drive it with a
//! fake clock.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::attachments::Attachments;
use crate::attachments::links::Signer;
use crate::db::{Db, PassLock};
use crate::error::StoreError;
use crate::sla::clocks::due::{self, BATCH, DueClock};
use crate::sla::clocks::store::Happening;
use crate::time::{Clock, Timestamp};

const PASS_LOCK_KEY: i64 = 0x5344_534c_4153_4348;

/// Announces every warning and breach due at `now`: warnings first, so a
/// clock whose warning and due time both passed warns before it breaches.
/// Returns how many it announced; 0 when another node holds the pass.
pub async fn run_pass(db: &Db, now: Timestamp, signer: &Signer) -> Result<usize, StoreError> {
    let Some(lock) = PassLock::try_take(db, PASS_LOCK_KEY, "sla").await? else {
        return Ok(0);
    };
    let mut announced = 0;
    for happening in [Happening::Warning, Happening::Breached] {
        loop {
            let due = due::due_batch(db, happening, now).await?;
            let batch = due.len();
            for clock in due {
                match claim(db, &clock, happening, now, signer).await {
                    Ok(true) => announced += 1,
                    Ok(false) => {}
                    Err(err) => {
                        tracing::warn!(ticket = %clock.ticket_id, error = %err, "sla clock not announced");
                        // Leave the rest for the next pass rather than
                        // reading the same failing clock again.
                        lock.release().await;
                        return Err(err);
                    }
                }
            }
            if batch < BATCH as usize {
                break;
            }
        }
    }
    lock.release().await;
    Ok(announced)
}

/// Claims one clock's warning or breach and records it on its ticket, in
/// one transaction; false when it was no longer due.
async fn claim(
    db: &Db,
    clock: &DueClock,
    happening: Happening,
    now: Timestamp,
    signer: &Signer,
) -> Result<bool, StoreError> {
    let mut tx = db.begin().await?;
    let Some(met) = due::claim(&mut tx, clock, happening, now).await? else {
        return Ok(false);
    };
    let tenant = clock.tenant();
    crate::tickets::store::record_sla(&mut tx, &tenant, clock.ticket_id, &[met], signer, now)
        .await?;
    tx.commit().await?;
    Ok(true)
}

/// Runs a pass every `rules_interval` (the first at once) until shutdown.
pub fn spawn(
    db: Db,
    attachments: Arc<Attachments>,
    clock: Clock,
    every: Duration,
    shutdown: watch::Receiver<bool>,
) -> JoinHandle<()> {
    let every = every.max(Duration::from_millis(10));
    let first = tokio::time::Instant::now();
    crate::time::every(shutdown, first, every, move || {
        let (db, attachments, now) = (db.clone(), attachments.clone(), clock.now());
        async move {
            let signer = attachments.signer(now);
            match run_pass(&db, now, &signer).await {
                Ok(0) => {}
                Ok(announced) => tracing::info!(announced, "sla warnings and breaches"),
                Err(err) => tracing::warn!(error = %err, "sla pass failed"),
            }
        }
    })
}
