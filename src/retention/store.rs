//! SQL of the retention pass: one batch-sized DELETE per kind of row, and
//! the lock that lets one node run the pass at a time.

use uuid::Uuid;

use crate::auth::{Mode, Tenant};
use crate::db::{Backend, Db, PassLock, Query, Tx};
use crate::error::StoreError;
use crate::time::Timestamp;

/// How a target's cutoff is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cutoff {
    /// `now - retention` (`SUPPORTDESK_RETENTION_DAYS`).
    Retention,
    /// `now - job_retention` (finished jobs).
    JobRetention,
    /// `now`: rows that carry their own expiry.
    Expiry,
}

/// One kind of row the pass deletes. `delete_batch` deletes at most `$2`
/// rows older than the cutoff `$1`, and never a row still pending or
/// leased; Postgres has no `DELETE … LIMIT`, so each statement picks its
/// rows with a limited sub-select.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// The table as the pass's report and log name it.
    pub table: &'static str,
    pub cutoff: Cutoff,
    pub delete_batch: &'static str,
}

/// A finished delivery (delivered or failed) past the cutoff whose job, if
/// it still has one, is not pending: the job and the delivery move
/// together, this only makes sure.
macro_rules! finished_delivery {
    () => {
        "d.status <> 'pending' AND d.created_at < $1 AND NOT EXISTS \
         (SELECT 1 FROM outbox_jobs j WHERE j.id = d.id AND j.status = 'pending')"
    };
}

/// Every target, in the order a pass visits them: attempts before their
/// deliveries (so no delete cascades into more rows than its batch).
pub const TARGETS: &[Target] = &[
    Target {
        table: "webhook_delivery_attempts",
        cutoff: Cutoff::Retention,
        delete_batch: concat!(
            "DELETE FROM webhook_delivery_attempts WHERE id IN (SELECT a.id \
             FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id \
             WHERE ",
            finished_delivery!(),
            " LIMIT $2)"
        ),
    },
    Target {
        table: "webhook_deliveries",
        cutoff: Cutoff::Retention,
        delete_batch: concat!(
            "DELETE FROM webhook_deliveries WHERE id IN (SELECT d.id FROM webhook_deliveries d \
             WHERE ",
            finished_delivery!(),
            " ORDER BY d.created_at LIMIT $2)"
        ),
    },
    Target {
        table: "outbox_jobs",
        cutoff: Cutoff::JobRetention,
        delete_batch: "DELETE FROM outbox_jobs WHERE id IN (SELECT id FROM outbox_jobs \
             WHERE status <> 'pending' AND updated_at < $1 ORDER BY updated_at LIMIT $2)",
    },
    // The pass deletes events through `delete_events_batch` (which also
    // records the change feed's watermark); this text is its DELETE.
    Target {
        table: "events",
        cutoff: Cutoff::Retention,
        // A feed entry not numbered yet stays: deleting it would skip it
        // without raising the watermark (it is numbered within a second).
        delete_batch: "DELETE FROM events WHERE id IN (SELECT id FROM events \
             WHERE created_at < $1 AND (record_type IS NULL OR seq IS NOT NULL) \
             ORDER BY created_at LIMIT $2)",
    },
    Target {
        table: "idempotency_keys",
        cutoff: Cutoff::Expiry,
        delete_batch: "DELETE FROM idempotency_keys \
             WHERE (company_id, mode, idempotency_key) IN (SELECT company_id, mode, \
             idempotency_key FROM idempotency_keys WHERE expires_at < $1 LIMIT $2)",
    },
];

/// Runs one batch of `target`; returns how many rows it deleted.
pub async fn delete_batch(
    db: &Db,
    target: &Target,
    cutoff: Timestamp,
    limit: i64,
) -> Result<u64, StoreError> {
    Query::new(target.delete_batch)
        .bind(cutoff)
        .bind(limit)
        .rows_affected(db)
        .await
}

/// The key of the pass's advisory lock ("SDRETAIN").
const PASS_LOCK_KEY: i64 = 0x5344_5245_5441_494e;

/// The pass lock, or None when another node is running a pass.
pub async fn lock_pass(db: &Db) -> Result<Option<PassLock>, StoreError> {
    PassLock::try_take(db, PASS_LOCK_KEY, "retention").await
}

#[derive(sqlx::FromRow)]
struct Deleted {
    company_id: Uuid,
    mode: Mode,
    seq: Option<i64>,
}

/// The retention pass's batch for `events`: deletes up to `limit` events
/// older than `cutoff`, oldest first, and raises the watermark of each
/// tenant whose feed entries it deleted, in one transaction (so a reader
/// never sees entries gone without the watermark that says so).
pub async fn delete_events_batch(
    db: &Db,
    cutoff: Timestamp,
    limit: i64,
) -> Result<u64, StoreError> {
    let mut tx = db.begin().await?;
    let events = TARGETS
        .iter()
        .find(|target| target.table == "events")
        .map_or("", |target| target.delete_batch);
    let deleted: Vec<Deleted> = Query::new(format!("{events} RETURNING company_id, mode, seq"))
        .bind(cutoff)
        .bind(limit)
        .fetch_all(&mut tx)
        .await?;
    let mut highest: Vec<(Tenant, i64)> = Vec::new();
    for row in &deleted {
        let Some(seq) = row.seq else { continue };
        let tenant = Tenant::new(row.company_id, row.mode);
        match highest.iter_mut().find(|(known, _)| *known == tenant) {
            Some((_, max)) => *max = (*max).max(seq),
            None => highest.push((tenant, seq)),
        }
    }
    for (tenant, seq) in &highest {
        Query::new(
            "INSERT INTO change_feed_watermarks (company_id, mode, seq) VALUES ($1, $2, $3) \
             ON CONFLICT (company_id, mode) DO UPDATE SET seq = CASE \
             WHEN excluded.seq > change_feed_watermarks.seq THEN excluded.seq \
             ELSE change_feed_watermarks.seq END",
        )
        .bind_tenant(tenant)
        .bind(*seq)
        .execute(&mut tx)
        .await?;
    }
    tx.commit().await?;
    Ok(u64::try_from(deleted.len()).unwrap_or(u64::MAX))
}

/// Up to `limit` chat sessions closed before `cutoff` (their tenant and
/// id), oldest first, locked
/// on Postgres until the caller's transaction ends (a message arriving
/// meanwhile waits, then finds its session gone); SQLite's write
/// transaction already holds them.
pub async fn closed_sessions(
    tx: &mut Tx,
    company: Option<Uuid>,
    cutoff: Timestamp,
    limit: i64,
) -> Result<Vec<(Tenant, Uuid)>, StoreError> {
    let lock = match tx.backend() {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    let mut query = Query::new("SELECT id, company_id, mode FROM chat_sessions WHERE ")
        .push(CLOSED_BEFORE)
        .bind(cutoff);
    if let Some(company) = company {
        query = query.push(" AND company_id = ").push_bind(company);
    }
    let rows: Vec<(Uuid, Uuid, Mode)> = query
        .push(" ORDER BY closed_at LIMIT ")
        .push_bind(limit)
        .push(lock)
        .fetch_all(tx)
        .await?;
    Ok(with_tenants(rows))
}

/// A chat closed before the cut-off (the first placeholder).
const CLOSED_BEFORE: &str = "status = 'CLOSED' AND closed_at < $1";

/// How many of the company's chats [`closed_sessions`] would find.
pub async fn count_closed_sessions(
    db: &Db,
    company: Uuid,
    cutoff: Timestamp,
) -> Result<u64, StoreError> {
    let count: i64 = Query::new("SELECT count(*) FROM chat_sessions WHERE ")
        .push(CLOSED_BEFORE)
        .bind(cutoff)
        .push(" AND company_id = ")
        .push_bind(company)
        .fetch_scalar(db)
        .await?;
    Ok(u64::try_from(count).unwrap_or(0))
}

/// The tickets made from `sessions` (their tenant and id), in the order
/// they were made.
pub async fn tickets_of_sessions(
    tx: &mut Tx,
    sessions: &[Uuid],
) -> Result<Vec<(Tenant, Uuid)>, StoreError> {
    if sessions.is_empty() {
        return Ok(Vec::new());
    }
    let rows: Vec<(Uuid, Uuid, Mode)> =
        Query::new("SELECT id, company_id, mode FROM tickets WHERE chat_session_id IN ")
            .push_bind_list(sessions.iter().copied())
            .push(" ORDER BY created_at, id")
            .fetch_all(tx)
            .await?;
    Ok(with_tenants(rows))
}

/// Rows of (id, company, mode) as (their tenant, id).
fn with_tenants(rows: Vec<(Uuid, Uuid, Mode)>) -> Vec<(Tenant, Uuid)> {
    rows.into_iter()
        .map(|(id, company, mode)| (Tenant::new(company, mode), id))
        .collect()
}
