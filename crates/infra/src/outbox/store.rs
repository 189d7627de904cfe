//! SQL for `outbox_jobs`: insert, claim with a lease, and the three ways an
//! attempt ends (`finish`, `retry`, `abandon`), each refused once the lease
//! is lost. Every time a job row holds (due, lease, created, updated) is
//! the database's, so the times of one job never mix two clocks.

use std::time::Duration;

use sqlx::types::Json;
use uuid::Uuid;

use super::JobStatus;
use crate::auth::Tenant;
use crate::db::{Backend, Db, NewRows, Query, Tx, millis};
use crate::error::StoreError;
use crate::time::Timestamp;

/// A job claimed by this worker until `lease`.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Job {
    pub id: Uuid,
    pub kind: String,
    pub payload: Json<serde_json::Value>,
    /// Attempts finished before this one.
    pub attempts: i32,
    /// The lease's expiry, which is also the claim's token: ending the
    /// attempt is refused if another worker has since re-claimed the job.
    #[sqlx(rename = "locked_until")]
    pub lease: Timestamp,
}

impl Job {
    /// The number of the attempt this claim makes (1-based).
    pub fn attempt(&self) -> i32 {
        self.attempts + 1
    }
}

/// Inserts a pending job, due now by the database's clock, inside `tx`.
pub async fn insert(
    tx: &mut Tx,
    id: Uuid,
    kind: &str,
    tenant: Option<&Tenant>,
    payload: &serde_json::Value,
) -> Result<(), StoreError> {
    rows(tx.backend(), id, kind, tenant, payload.clone())
        .insert()
        .execute(tx)
        .await
}

/// A pending job's row, due now by the database's clock, as `NewRows`: a
/// write that makes its record in one statement of data-modifying CTEs
/// (a Postgres ticket create) queues it in that statement. Written after a
/// record (`NewRows::push_after`), a JSON object payload also gets the
/// record's value at the statement's key (a ticket's `ticketNumber`).
pub fn rows(
    backend: Backend,
    id: Uuid,
    kind: &str,
    tenant: Option<&Tenant>,
    payload: serde_json::Value,
) -> NewRows {
    // A job of no tenant leaves both columns NULL.
    let (company, mode) = match tenant {
        Some(tenant) => (Some(tenant.company_id), Some(tenant.mode.as_str())),
        None => (None, None),
    };
    let now = backend.now_sql();
    NewRows::of(
        "outbox_jobs",
        "id, kind, company_id, mode, payload, status",
        [
            id.into(),
            kind.into(),
            company.into(),
            mode.into(),
            payload.into(),
            JobStatus::Pending.as_str().into(),
        ],
    )
    .computed("attempts", "0")
    .computed("run_at", now)
    .computed("created_at", now)
    .computed("updated_at", now)
}

/// Claims up to `limit` due jobs of `kind` for `lease`, in one statement:
/// `FOR UPDATE SKIP LOCKED` on Postgres, so concurrent nodes never claim
/// the same job; on SQLite the statement holds the write lock. "Due" and
/// the lease's expiry are read from the database's clock, so a node whose
/// clock runs ahead does not take a job another node still holds.
pub async fn claim(
    db: &Db,
    kind: &str,
    lease: Duration,
    limit: i64,
) -> Result<Vec<Job>, StoreError> {
    let backend = db.backend();
    let lock = match backend {
        Backend::Postgres => "FOR UPDATE SKIP LOCKED",
        Backend::Sqlite => "",
    };
    let (now, until) = (backend.now_sql(), backend.now_plus_sql("$1"));
    Query::new(format!(
        "UPDATE outbox_jobs SET locked_until = {until} WHERE id IN \
         (SELECT id FROM outbox_jobs WHERE status = $4 AND kind = $3 AND run_at <= {now} \
          AND (locked_until IS NULL OR locked_until <= {now}) ORDER BY run_at LIMIT $2 {lock}) \
         RETURNING id, kind, payload, attempts, locked_until"
    ))
    .bind(millis(lease))
    .bind(limit)
    .bind(kind)
    .bind(JobStatus::Pending)
    .fetch_all(db)
    .await
}

/// Ends `job` as done, inside `tx`, if its lease still holds; false (and
/// nothing changed) otherwise.
pub async fn finish(tx: &mut Tx, job: &Job) -> Result<bool, StoreError> {
    let ended = end_attempt(tx, job, JobStatus::Done, None, None).await?;
    Ok(ended.is_some())
}

/// Makes `job` due again `delay` from now (by the database's clock) after
/// a failed attempt, if its lease still holds; returns when it is due.
pub async fn retry(
    tx: &mut Tx,
    job: &Job,
    delay: Duration,
    error: &str,
) -> Result<Option<Timestamp>, StoreError> {
    end_attempt(tx, job, JobStatus::Pending, Some(delay), Some(error)).await
}

/// Gives `job` up (no further attempt), if its lease still holds.
pub async fn abandon(tx: &mut Tx, job: &Job, error: &str) -> Result<bool, StoreError> {
    let ended = end_attempt(tx, job, JobStatus::Failed, None, Some(error)).await?;
    Ok(ended.is_some())
}

/// Ends the attempt, moving `run_at` on by `retry_delay` when given;
/// returns the job's `run_at`, or None when the lease was lost.
async fn end_attempt(
    tx: &mut Tx,
    job: &Job,
    status: JobStatus,
    retry_delay: Option<Duration>,
    error: Option<&str>,
) -> Result<Option<Timestamp>, StoreError> {
    let run_at = match retry_delay {
        Some(_) => tx.backend().now_plus_sql("$7"),
        None => "run_at".to_string(),
    };
    let query = Query::new(format!(
        "UPDATE outbox_jobs SET status = $3, attempts = $4, run_at = {run_at}, \
         locked_until = NULL, last_error = $5, updated_at = {now} \
         WHERE id = $1 AND locked_until = $2 AND status = $6 RETURNING run_at",
        now = tx.backend().now_sql()
    ))
    .bind(job.id)
    .bind(job.lease)
    .bind(status)
    .bind(i64::from(job.attempt()))
    .bind(error)
    .bind(JobStatus::Pending);
    let query = match retry_delay {
        Some(delay) => query.bind(millis(delay)),
        None => query,
    };
    let ended: Option<(Timestamp,)> = query.fetch_optional(tx).await?;
    Ok(ended.map(|(run_at,)| run_at))
}

/// Where a job stands, for tests and operators.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct JobState {
    pub status: JobStatus,
    pub attempts: i32,
    pub last_error: Option<String>,
}

pub async fn state(db: &Db, id: Uuid) -> Result<JobState, StoreError> {
    Query::new("SELECT status, attempts, last_error FROM outbox_jobs WHERE id = $1")
        .bind(id)
        .fetch_one(db)
        .await
}

/// The pending jobs of one kind, for metrics: due (waiting for a worker),
/// running (leased) and scheduled (a retry not yet due), and how long the
/// oldest due one has waited.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct KindDepth {
    pub kind: String,
    pub due: i64,
    pub running: i64,
    pub scheduled: i64,
    pub oldest_due_age_secs: Option<f64>,
}

/// The queue's depth by kind, in one statement over the pending jobs only
/// (the partial index of due jobs; finished jobs are never read).
pub async fn depth(db: &Db) -> Result<Vec<KindDepth>, StoreError> {
    let backend = db.backend();
    let now = backend.now_sql();
    let age = match backend {
        Backend::Postgres => format!("EXTRACT(EPOCH FROM {now} - MIN(due_at))::float8"),
        Backend::Sqlite => format!("(julianday({now}) - julianday(MIN(due_at))) * 86400.0"),
    };
    let leased = format!("locked_until IS NOT NULL AND locked_until > {now}");
    Query::new(format!(
        "SELECT kind, \
         SUM(CASE WHEN due_at IS NOT NULL THEN 1 ELSE 0 END) AS due, \
         SUM(CASE WHEN {leased} THEN 1 ELSE 0 END) AS running, \
         SUM(CASE WHEN due_at IS NULL AND NOT ({leased}) THEN 1 ELSE 0 END) AS scheduled, \
         {age} AS oldest_due_age_secs \
         FROM (SELECT kind, locked_until, \
               CASE WHEN run_at <= {now} AND NOT ({leased}) THEN run_at END AS due_at \
               FROM outbox_jobs WHERE status = $1) AS pending \
         GROUP BY kind"
    ))
    .bind(JobStatus::Pending)
    .fetch_all(db)
    .await
}

/// Deletes the tenant's jobs whose payload names `person` (pending, done
/// or failed: an email to them, queued or sent), in `tx`; answers their
/// ids and kinds, so what a job left outside the database (a mail file
/// named by its id) can go too. A job in flight loses its lease and ends
/// without effect.
pub async fn erase_mentions(
    tx: &mut Tx,
    tenant: &Tenant,
    person: &crate::erasure::Person,
) -> Result<Vec<(Uuid, String)>, StoreError> {
    if person.is_empty() {
        return Ok(Vec::new());
    }
    let payload = format!(
        "coalesce({}, '')",
        crate::erasure::json_text(tx.backend(), "payload")
    );
    let query = Query::new("SELECT id, kind FROM outbox_jobs WHERE ")
        .push_tenant(tenant, "")
        .push(" AND ");
    let jobs: Vec<(Uuid, String)> = person
        .push_mentions(query, &payload)
        .fetch_all(&mut *tx)
        .await?;
    for chunk in jobs.chunks(500) {
        Query::new("DELETE FROM outbox_jobs WHERE id IN ")
            .push_bind_list(chunk.iter().map(|(id, _)| *id))
            .execute(&mut *tx)
            .await?;
    }
    Ok(jobs)
}

/// The tenant's jobs of `kind` whose payload names `person`, with their
/// payloads and states (an export lists the emails queued or sent to
/// them).
pub async fn mentioning(
    db: &Db,
    tenant: &Tenant,
    kind: &str,
    person: &crate::erasure::Person,
) -> Result<Vec<(Uuid, Json<serde_json::Value>, String)>, StoreError> {
    if person.is_empty() {
        return Ok(Vec::new());
    }
    let payload = format!(
        "coalesce({}, '')",
        crate::erasure::json_text(db.backend(), "payload")
    );
    let query = Query::new("SELECT id, payload, status FROM outbox_jobs WHERE kind = ")
        .push_bind(kind)
        .push(" AND ")
        .push_tenant(tenant, "")
        .push(" AND ");
    person
        .push_mentions(query, &payload)
        .push(" ORDER BY id")
        .fetch_all(db)
        .await
}
