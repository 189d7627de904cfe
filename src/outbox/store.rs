//! SQL for `outbox_jobs` (emails). Same claim-with-lease pattern as the
//! webhook deliveries: one statement claims due rows, the lease's expiry is
//! the claim's token, and finishing is refused once another worker holds it.

use sqlx::types::Json;
use uuid::Uuid;

use crate::auth::Tenant;
use crate::db::{Backend, Db, Tx};
use crate::error::StoreError;
use crate::time::{Timestamp, new_id};
use crate::{on_db, on_tx};

/// A job claimed by this worker until `lease`.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Job {
    pub id: Uuid,
    pub kind: String,
    pub payload: Json<serde_json::Value>,
    /// Attempts finished before this one.
    pub attempts: i32,
    #[sqlx(rename = "locked_until")]
    pub lease: Timestamp,
}

/// Inserts a job, due at `run_at`, inside `tx`.
pub async fn insert(
    tx: &mut Tx,
    kind: &str,
    tenant: Option<&Tenant>,
    payload: &serde_json::Value,
    run_at: Timestamp,
) -> Result<Uuid, StoreError> {
    let id = new_id();
    let now = Timestamp::now();
    on_tx!(tx, c => sqlx::query(
        "INSERT INTO outbox_jobs (id, kind, company_id, mode, payload, status, attempts, run_at, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, $7, $7)")
        .bind(id)
        .bind(kind)
        .bind(tenant.map(|t| t.company_id))
        .bind(tenant.map(|t| t.mode.as_str()))
        .bind(Json(payload))
        .bind(run_at)
        .bind(now)
        .execute(c)
        .await?
        .rows_affected());
    Ok(id)
}

/// Claims up to `limit` due jobs of `kind` until `lease` (Postgres: `FOR
/// UPDATE SKIP LOCKED`; SQLite: the statement holds the write lock).
pub async fn claim_due(
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
    let sql = format!(
        "UPDATE outbox_jobs SET locked_until = $1 WHERE id IN \
         (SELECT id FROM outbox_jobs WHERE status = 'pending' AND kind = $4 AND run_at <= $2 \
          AND (locked_until IS NULL OR locked_until <= $2) ORDER BY run_at LIMIT $3 {lock}) \
         RETURNING id, kind, payload, attempts, locked_until"
    );
    Ok(
        on_db!(db, c => sqlx::query_as::<_, Job>(sqlx::AssertSqlSafe(sql))
        .bind(lease).bind(now).bind(limit).bind(kind).fetch_all(c).await?),
    )
}

/// How a job's attempt ended.
pub enum JobOutcome {
    Done,
    Retry { at: Timestamp, error: String },
    Failed { error: String },
}

/// Records the attempt of `job` if its lease still holds; false otherwise.
pub async fn finish(db: &Db, job: &Job, outcome: &JobOutcome) -> Result<bool, StoreError> {
    let (status, run_at, error) = match outcome {
        JobOutcome::Done => ("done", None, None),
        JobOutcome::Retry { at, error } => ("pending", Some(*at), Some(error.as_str())),
        JobOutcome::Failed { error } => ("failed", None, Some(error.as_str())),
    };
    let moved = on_db!(db, c => sqlx::query(
        "UPDATE outbox_jobs SET status = $3, attempts = $4, run_at = COALESCE($5, run_at), \
         locked_until = NULL, last_error = $6, updated_at = $7 \
         WHERE id = $1 AND locked_until = $2 AND status = 'pending'")
        .bind(job.id).bind(job.lease).bind(status).bind(job.attempts + 1)
        .bind(run_at).bind(error).bind(Timestamp::now())
        .execute(c).await?.rows_affected());
    Ok(moved > 0)
}

/// A job's state, for tests and operators: (status, attempts, last error).
pub async fn state(db: &Db, id: Uuid) -> Result<(String, i32, Option<String>), StoreError> {
    Ok(
        on_db!(db, c => sqlx::query_as::<_, (String, i32, Option<String>)>(
        "SELECT status, attempts, last_error FROM outbox_jobs WHERE id = $1")
        .bind(id).fetch_one(c).await?),
    )
}
