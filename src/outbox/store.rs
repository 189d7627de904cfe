//! SQL for `outbox_jobs`: insert, claim with a lease, and the three ways an
//! attempt ends (`finish`, `retry`, `abandon`), each refused once the lease
//! is lost.

use sqlx::types::Json;
use uuid::Uuid;

use super::JobStatus;
use crate::auth::Tenant;
use crate::db::{Backend, Db, Query, Tx};
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

/// Inserts a pending job, due at `run_at`, inside `tx`.
pub async fn insert(
    tx: &mut Tx,
    id: Uuid,
    kind: &str,
    tenant: Option<&Tenant>,
    payload: &serde_json::Value,
    run_at: Timestamp,
) -> Result<(), StoreError> {
    let query = Query::new(
        "INSERT INTO outbox_jobs (id, kind, company_id, mode, payload, status, attempts, run_at, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $8, $8)",
    )
    .bind(id)
    .bind(kind);
    let query = match tenant {
        Some(tenant) => query.bind_tenant(tenant),
        // A job of no tenant leaves both columns NULL.
        None => query.bind(None::<Uuid>).bind(None::<&str>),
    };
    query
        .bind(payload)
        .bind(JobStatus::Pending)
        .bind(run_at)
        .bind(Timestamp::now())
        .execute(tx)
        .await
}

/// Claims up to `limit` due jobs of `kind` until `lease`, in one statement:
/// `FOR UPDATE SKIP LOCKED` on Postgres, so concurrent nodes never claim
/// the same job; on SQLite the statement holds the write lock.
pub async fn claim(
    db: &Db,
    kind: &str,
    now: Timestamp,
    lease: Timestamp,
    limit: i64,
) -> Result<Vec<Job>, StoreError> {
    let lock = match db.backend() {
        Backend::Postgres => "FOR UPDATE SKIP LOCKED",
        Backend::Sqlite => "",
    };
    Query::new(format!(
        "UPDATE outbox_jobs SET locked_until = $1 WHERE id IN \
         (SELECT id FROM outbox_jobs WHERE status = $5 AND kind = $4 AND run_at <= $2 \
          AND (locked_until IS NULL OR locked_until <= $2) ORDER BY run_at LIMIT $3 {lock}) \
         RETURNING id, kind, payload, attempts, locked_until"
    ))
    .bind(lease)
    .bind(now)
    .bind(limit)
    .bind(kind)
    .bind(JobStatus::Pending)
    .fetch_all(db)
    .await
}

/// Ends `job` as done, inside `tx`, if its lease still holds; false (and
/// nothing changed) otherwise.
pub async fn finish(tx: &mut Tx, job: &Job) -> Result<bool, StoreError> {
    end_attempt(tx, job, JobStatus::Done, None, None).await
}

/// Makes `job` due again at `at` after a failed attempt, if its lease
/// still holds.
pub async fn retry(tx: &mut Tx, job: &Job, at: Timestamp, error: &str) -> Result<bool, StoreError> {
    end_attempt(tx, job, JobStatus::Pending, Some(at), Some(error)).await
}

/// Gives `job` up (no further attempt), if its lease still holds.
pub async fn abandon(tx: &mut Tx, job: &Job, error: &str) -> Result<bool, StoreError> {
    end_attempt(tx, job, JobStatus::Failed, None, Some(error)).await
}

async fn end_attempt(
    tx: &mut Tx,
    job: &Job,
    status: JobStatus,
    run_at: Option<Timestamp>,
    error: Option<&str>,
) -> Result<bool, StoreError> {
    let moved = Query::new(
        "UPDATE outbox_jobs SET status = $3, attempts = $4, run_at = COALESCE($5, run_at), \
         locked_until = NULL, last_error = $6, updated_at = $7 \
         WHERE id = $1 AND locked_until = $2 AND status = $8",
    )
    .bind(job.id)
    .bind(job.lease)
    .bind(status)
    .bind(i64::from(job.attempt()))
    .bind(run_at)
    .bind(error)
    .bind(Timestamp::now())
    .bind(JobStatus::Pending)
    .rows_affected(tx)
    .await?;
    Ok(moved > 0)
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
