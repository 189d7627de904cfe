//! The clocks whose warning or due time has come, and the claim of one:
//! the SLA's half of the pass that announces warnings and breaches (the
//! sequence that runs it, and records each claim on its ticket in the same
//! transaction, is `sequences::sla_pass`). The pass reads only the indexed
//! due times of running clocks (never the tickets), and a claim is a
//! conditional UPDATE, so each happens exactly once per ticket and metric.

use uuid::Uuid;

use super::Metric;
use super::store::{Happening, Met};
use crate::auth::{Mode, Tenant};
use crate::db::{Db, Query, Tx};
use crate::error::StoreError;
use crate::time::Timestamp;

/// At most this many clocks per kind of happening per query; a pass reads
/// batches until none is left.
pub const BATCH: i64 = 500;

/// A running clock whose warning or due time has come.
#[derive(sqlx::FromRow)]
pub struct DueClock {
    pub ticket_id: Uuid,
    pub metric: Metric,
    company_id: Uuid,
    mode: Mode,
}

impl DueClock {
    /// The tenant of the clock's ticket.
    pub fn tenant(&self) -> Tenant {
        Tenant::new(self.company_id, self.mode)
    }
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

/// One batch of the clocks whose `happening` is due at `now`, earliest
/// first.
pub async fn due_batch(
    db: &Db,
    happening: Happening,
    now: Timestamp,
) -> Result<Vec<DueClock>, StoreError> {
    Query::new(due_sql(happening == Happening::Warning))
        .bind(now)
        .bind(BATCH)
        .fetch_all(db)
        .await
}

/// Claims `clock`'s warning or breach in `tx`: what was met, at the exact
/// warning or due time whenever the pass ran; None when it was no longer
/// due (met, paused, retargeted or claimed meanwhile).
pub async fn claim(
    tx: &mut Tx,
    clock: &DueClock,
    happening: Happening,
    now: Timestamp,
) -> Result<Option<Met>, StoreError> {
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
        .fetch_optional(&mut *tx)
        .await?;
    Ok(match claimed {
        Some((due_at, Some(at))) => Some(Met {
            happening,
            metric: clock.metric,
            due_at,
            at,
        }),
        _ => None,
    })
}
