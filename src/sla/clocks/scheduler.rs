//! The SLA scheduler: every `rules_interval` each node tries a pass; on
//! Postgres an advisory lock lets one node run it at a time. A pass reads
//! only the indexed due times of running clocks (never the tickets), and
//! claims each warning and breach with a conditional UPDATE in the
//! transaction that records its event, so each happens exactly once per
//! ticket and metric. `run_pass` takes "now" so tests drive it with a fake
//! clock.

use std::time::Duration;

use tokio::task::JoinHandle;
use uuid::Uuid;

use super::Metric;
use super::store::{Happening, Met};
use crate::attachments::links::Signer;
use crate::auth::{Mode, Tenant};
use crate::db::{Db, PassLock, Query};
use crate::error::StoreError;
use crate::state::AppState;
use crate::time::Timestamp;

/// At most this many clocks per kind of happening per query; a pass reads
/// batches until none is left.
pub const BATCH: i64 = 500;

const PASS_LOCK_KEY: i64 = 0x5344_534c_4153_4348;

/// A running clock whose warning or due time has come.
#[derive(sqlx::FromRow)]
struct DueClock {
    ticket_id: Uuid,
    metric: Metric,
    company_id: Uuid,
    mode: Mode,
}

/// The SQL of one batch of due warnings (`warn`) or breaches: one range
/// read of a partial index (`ticket_sla_warn` or `ticket_sla_due`).
#[doc(hidden)]
pub fn due_sql(warn: bool) -> &'static str {
    if warn {
        "SELECT ticket_id, metric, company_id, mode FROM ticket_sla \
         WHERE state = 'running' AND warned_at IS NULL AND warn_at <= $1 \
         ORDER BY warn_at LIMIT $2"
    } else {
        "SELECT ticket_id, metric, company_id, mode FROM ticket_sla \
         WHERE state = 'running' AND due_at <= $1 ORDER BY due_at LIMIT $2"
    }
}

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
            let due: Vec<DueClock> = Query::new(due_sql(happening == Happening::Warning))
                .bind(now)
                .bind(BATCH)
                .fetch_all(db)
                .await?;
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

/// Claims one clock's warning or breach and records it, in one
/// transaction; false when it was no longer due (met, paused, retargeted
/// or claimed meanwhile). The recorded instant is the exact warning or due
/// time, whenever the pass ran.
async fn claim(
    db: &Db,
    clock: &DueClock,
    happening: Happening,
    now: Timestamp,
    signer: &Signer,
) -> Result<bool, StoreError> {
    let tenant = Tenant {
        company_id: clock.company_id,
        mode: clock.mode,
    };
    let mut tx = db.begin().await?;
    let sql = match happening {
        Happening::Warning => {
            "UPDATE ticket_sla SET warned_at = warn_at WHERE ticket_id = $1 AND metric = $2 \
             AND state = 'running' AND warned_at IS NULL AND warn_at <= $3 \
             RETURNING due_at, warn_at AS at"
        }
        _ => {
            "UPDATE ticket_sla SET state = 'breached', breached_at = due_at, \
             warned_at = COALESCE(warned_at, warn_at) WHERE ticket_id = $1 AND metric = $2 \
             AND state = 'running' AND due_at <= $3 RETURNING due_at, due_at AS at"
        }
    };
    let claimed: Option<(Option<Timestamp>, Option<Timestamp>)> = Query::new(sql)
        .bind(clock.ticket_id)
        .bind(clock.metric)
        .bind(now)
        .fetch_optional(&mut tx)
        .await?;
    let Some((due_at, Some(at))) = claimed else {
        return Ok(false);
    };
    let met = Met {
        happening,
        metric: clock.metric,
        due_at,
        at,
    };
    crate::tickets::store::record_sla(&mut tx, &tenant, clock.ticket_id, &[met], signer, now)
        .await?;
    tx.commit().await?;
    Ok(true)
}

/// Runs a pass every `rules_interval` (the first at once) until shutdown.
pub fn spawn(state: &AppState) -> JoinHandle<()> {
    let state = state.clone();
    let every = state.config.rules_interval.max(Duration::from_millis(10));
    let first = tokio::time::Instant::now();
    crate::time::every(state.shutdown.clone(), first, every, move || {
        let state = state.clone();
        async move {
            let signer = state.link_signer();
            match run_pass(&state.db, state.clock.now(), &signer).await {
                Ok(0) => {}
                Ok(announced) => tracing::info!(announced, "sla warnings and breaches"),
                Err(err) => tracing::warn!(error = %err, "sla pass failed"),
            }
        }
    })
}
