//! Durable background work: webhook deliveries and emails, written in the
//! transaction of the change that causes them, claimed by workers on every
//! node with a lease, retried on failure on one schedule.
//!
//! Webhook deliveries are claimed from their own table
//! (`webhook_deliveries`, which is also the delivery log the API shows);
//! emails from `outbox_jobs`. Both use the same machinery: one statement
//! claims due rows (`FOR UPDATE SKIP LOCKED` on Postgres), the lease's
//! expiry is the claim's token, finishing is refused when the lease was
//! lost, and a crash mid-job means the row is claimed again once the lease
//! lapses (at-least-once). `run_due` is one step of the worker, public so
//! tests drive it with `config.run_workers = false`.

pub mod store;

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::task::JoinHandle;
use uuid::Uuid;

use crate::app::AppState;
use crate::auth::Tenant;
use crate::config::Config;
use crate::db::Tx;
use crate::error::StoreError;
use crate::mail::{self, Email, Mailer};
use crate::time::Timestamp;
use crate::webhooks::guard::GuardedResolver;
use store::JobOutcome;

/// How often an idle worker looks for due work.
const POLL_INTERVAL: Duration = Duration::from_millis(500);
/// Most rows one step claims per table (and sends concurrently).
const BATCH: i64 = 16;
/// Lease of an email job: longer than the SMTP timeout.
const EMAIL_LEASE: Duration = Duration::from_secs(120);

/// Shared outbound machinery: the webhook HTTP client and the mailer.
pub struct Outbound {
    /// SSRF-guarded (resolver filter), no redirects, no proxy, with the
    /// webhook timeout.
    pub http: reqwest::Client,
    pub mailer: Mailer,
    /// Lifts the SSRF guard (development, tests).
    pub allow_private: bool,
    pub timeout: Duration,
    /// Delays before attempts 2, 3, …: `SUPPORTDESK_WEBHOOK_RETRY_DELAYS`.
    pub retry_delays: Vec<Duration>,
    /// How long a claimed delivery stays reserved for its worker: the
    /// timeout twice plus a margin for the store writes.
    pub lease: Duration,
}

impl Outbound {
    pub fn new(config: &Config) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .dns_resolver(GuardedResolver {
                allow_private: config.webhook_allow_private,
            })
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(config.webhook_timeout)
            .user_agent(concat!("Supportdesk-Webhooks/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Outbound {
            http,
            mailer: Mailer::new(config)?,
            allow_private: config.webhook_allow_private,
            timeout: config.webhook_timeout,
            retry_delays: config.webhook_retry_delays.clone(),
            lease: config.webhook_timeout * 2 + Duration::from_secs(5),
        })
    }

    /// Attempts in all: the first plus one per retry delay.
    pub fn max_attempts(&self) -> i32 {
        i32::try_from(self.retry_delays.len() + 1).unwrap_or(i32::MAX)
    }

    /// When to make the next attempt after attempt `attempt` (1-based)
    /// failed at `now`; None once the schedule is used up.
    pub fn retry_at(&self, attempt: i32, now: Timestamp) -> Option<Timestamp> {
        let index = usize::try_from(attempt).ok()?.checked_sub(1)?;
        self.retry_delays.get(index).map(|delay| now.plus(*delay))
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
    let payload = serde_json::to_value(payload)
        .map_err(|e| StoreError::Database(sqlx::Error::Encode(Box::new(e))))?;
    store::insert(tx, kind, tenant, &payload, run_at).await
}

/// One step of the worker: claims and runs every due delivery and email
/// (up to a batch of each). Returns how many it ran; store errors are
/// logged and count as nothing done.
pub async fn run_due(state: &AppState) -> usize {
    let (deliveries, emails) = tokio::join!(
        crate::webhooks::worker::deliver_due(state),
        send_due_emails(state)
    );
    let mut done = 0;
    for (what, result) in [("webhook deliveries", deliveries), ("emails", emails)] {
        match result {
            Ok(n) => done += n,
            Err(err) => tracing::warn!(error = %err, "outbox: could not claim {what}"),
        }
    }
    done
}

/// Starts this node's outbox worker; it stops when `state.shutdown` flips.
pub fn spawn_workers(state: &AppState) -> Vec<JoinHandle<()>> {
    let state = state.clone();
    vec![tokio::spawn(async move {
        let mut shutdown = state.shutdown.clone();
        while !*shutdown.borrow() {
            if run_due(&state).await > 0 {
                continue;
            }
            tokio::select! {
                _ = tokio::time::sleep(POLL_INTERVAL) => {}
                changed = shutdown.changed() => if changed.is_err() { break },
            }
        }
    })]
}

async fn send_due_emails(state: &AppState) -> Result<usize, StoreError> {
    let now = Timestamp::now();
    let jobs =
        store::claim_due(&state.db, mail::JOB_KIND, now, now.plus(EMAIL_LEASE), BATCH).await?;
    let count = jobs.len();
    let outbound = Arc::clone(&state.outbound);
    futures::future::join_all(jobs.into_iter().map(|job| {
        let outbound = Arc::clone(&outbound);
        let db = state.db.clone();
        async move {
            let outcome = send_email(&outbound, &job).await;
            if let JobOutcome::Retry { error, .. } | JobOutcome::Failed { error } = &outcome {
                tracing::warn!(job = %job.id, attempt = job.attempts + 1, %error, "email not sent");
            }
            match store::finish(&db, &job, &outcome).await {
                Ok(true) => {}
                Ok(false) => tracing::warn!(job = %job.id, "email job lease lost"),
                Err(err) => tracing::warn!(job = %job.id, error = %err, "email job not recorded"),
            }
        }
    }))
    .await;
    Ok(count)
}

async fn send_email(outbound: &Outbound, job: &store::Job) -> JobOutcome {
    let email: Email = match serde_json::from_value(job.payload.0.clone()) {
        Ok(email) => email,
        Err(err) => {
            return JobOutcome::Failed {
                error: format!("unreadable email job: {err}"),
            };
        }
    };
    match outbound.mailer.send(job.id, &email).await {
        Ok(()) => JobOutcome::Done,
        Err(err) => match outbound.retry_at(job.attempts + 1, Timestamp::now()) {
            Some(at) if !err.permanent => JobOutcome::Retry {
                at,
                error: err.message,
            },
            _ => JobOutcome::Failed { error: err.message },
        },
    }
}
