//! Durable background jobs: enqueued in the transaction of the change that
//! causes them, claimed by workers with a lease, retried on failure.

use serde::Serialize;
use tokio::task::JoinHandle;
use uuid::Uuid;

use crate::app::AppState;
use crate::auth::Tenant;
use crate::config::Config;
use crate::db::Tx;
use crate::error::StoreError;
use crate::on_tx;
use crate::time::{Timestamp, new_id};

/// Shared outbound machinery (HTTP client for webhooks, mailer).
pub struct Outbound {}

impl Outbound {
    pub fn new(_config: &Config) -> anyhow::Result<Self> {
        Ok(Outbound {})
    }
}

/// Enqueues a job of `kind` to run at `run_at`, inside `tx`.
pub async fn enqueue(
    tx: &mut Tx,
    kind: &str,
    tenant: Option<&Tenant>,
    payload: &impl Serialize,
    run_at: Timestamp,
) -> Result<Uuid, StoreError> {
    let id = new_id();
    let now = Timestamp::now();
    let payload = sqlx::types::Json(payload);
    on_tx!(tx, c => sqlx::query(
        "INSERT INTO outbox_jobs (id, kind, company_id, mode, payload, status, attempts, run_at, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, $7, $7)")
        .bind(id)
        .bind(kind)
        .bind(tenant.map(|t| t.company_id))
        .bind(tenant.map(|t| t.mode.as_str()))
        .bind(payload)
        .bind(run_at)
        .bind(now)
        .execute(c)
        .await?
        .rows_affected());
    Ok(id)
}

/// Starts this node's outbox workers.
pub fn spawn_workers(_state: &AppState) -> Vec<JoinHandle<()>> {
    Vec::new()
}
