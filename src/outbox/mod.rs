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
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use uuid::Uuid;

use crate::auth::Tenant;
use crate::config::Config;
use crate::db::Tx;
use crate::error::StoreError;
use crate::mail::{self, Email, Mailer};
use crate::state::AppState;
use crate::time::Timestamp;
use crate::webhooks::guard::GuardedResolver;
use store::JobOutcome;

/// How often an idle worker looks for due work.
const POLL_INTERVAL: Duration = Duration::from_millis(500);
/// Most rows one `run_due` step claims per table (and sends concurrently).
const BATCH: i64 = 16;
/// Most items a node's worker has in flight at once.
const CONCURRENCY: usize = 32;
/// How long a stopping worker waits for its in-flight items.
const DRAIN: Duration = Duration::from_secs(8);
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

/// One claimed piece of work.
enum Work {
    Delivery(crate::webhooks::store::deliveries::Claimed),
    Email(store::Job),
}

/// Claims up to `limit` due items, `deliveries_first` or emails first (the
/// worker alternates, so neither kind starves the other).
async fn claim(state: &AppState, limit: i64, deliveries_first: bool) -> Vec<Work> {
    let mut work = Vec::new();
    for deliveries in [deliveries_first, !deliveries_first] {
        let room = limit - work.len() as i64;
        if room <= 0 {
            break;
        }
        let claimed = if deliveries {
            crate::webhooks::worker::claim(state, room)
                .await
                .map(|rows| rows.into_iter().map(Work::Delivery).collect::<Vec<_>>())
        } else {
            claim_emails(state, room)
                .await
                .map(|rows| rows.into_iter().map(Work::Email).collect())
        };
        match claimed {
            Ok(rows) => work.extend(rows),
            Err(err) => tracing::warn!(error = %err, "outbox: could not claim work"),
        }
    }
    work
}

async fn run(state: &AppState, work: Work) {
    match work {
        Work::Delivery(claim) => crate::webhooks::worker::run(state, claim).await,
        Work::Email(job) => run_email(state, job).await,
    }
}

/// One step of the worker: claims every due delivery and email (up to a
/// batch of each), runs them concurrently and waits for them. Returns how
/// many it ran; store errors are logged and count as nothing done.
pub async fn run_due(state: &AppState) -> usize {
    let (deliveries, emails) = tokio::join!(
        crate::webhooks::worker::claim(state, BATCH),
        claim_emails(state, BATCH)
    );
    let mut work = Vec::new();
    match deliveries {
        Ok(rows) => work.extend(rows.into_iter().map(Work::Delivery)),
        Err(err) => tracing::warn!(error = %err, "outbox: could not claim deliveries"),
    }
    match emails {
        Ok(jobs) => work.extend(jobs.into_iter().map(Work::Email)),
        Err(err) => tracing::warn!(error = %err, "outbox: could not claim emails"),
    }
    let count = work.len();
    futures::future::join_all(work.into_iter().map(|w| run(state, w))).await;
    count
}

/// Starts this node's outbox worker: a loop that keeps up to `CONCURRENCY`
/// items in flight (a slow endpoint holds one slot, not a whole batch),
/// polls every 0.5 s when idle, and on shutdown stops claiming and lets
/// in-flight items finish (briefly; an unfinished one is retried after its
/// lease by any node).
pub fn spawn_workers(state: &AppState) -> Vec<JoinHandle<()>> {
    vec![tokio::spawn(worker_loop(state.clone()))]
}

async fn worker_loop(state: AppState) {
    let slots = Arc::new(Semaphore::new(CONCURRENCY));
    let mut shutdown = state.shutdown.clone();
    let mut deliveries_first = true;
    while !*shutdown.borrow() {
        let free = slots.available_permits();
        if free == 0 {
            // Every slot is busy: wait for one to free up.
            tokio::select! {
                permit = slots.acquire() => drop(permit),
                changed = shutdown.changed() => if changed.is_err() { break },
            }
            continue;
        }
        let work = claim(&state, free as i64, deliveries_first).await;
        deliveries_first = !deliveries_first;
        let claimed = work.len();
        for item in work {
            let Ok(permit) = slots.clone().try_acquire_owned() else {
                break; // cannot happen: only this loop takes permits
            };
            let state = state.clone();
            tokio::spawn(async move {
                run(&state, item).await;
                drop(permit);
            });
        }
        if claimed == free {
            continue; // maybe more is due
        }
        tokio::select! {
            _ = tokio::time::sleep(POLL_INTERVAL) => {}
            changed = shutdown.changed() => if changed.is_err() { break },
        }
    }
    let all = u32::try_from(CONCURRENCY).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(DRAIN, slots.acquire_many(all)).await;
}

async fn claim_emails(state: &AppState, limit: i64) -> Result<Vec<store::Job>, StoreError> {
    let now = Timestamp::now();
    store::claim_due(&state.db, mail::JOB_KIND, now, now.plus(EMAIL_LEASE), limit).await
}

async fn run_email(state: &AppState, job: store::Job) {
    let outcome = send_email(&state.outbound, &job).await;
    if let JobOutcome::Retry { error, .. } | JobOutcome::Failed { error } = &outcome {
        tracing::warn!(job = %job.id, attempt = job.attempts + 1, %error, "email not sent");
    }
    match store::finish(&state.db, &job, &outcome).await {
        Ok(true) => {}
        Ok(false) => tracing::warn!(job = %job.id, "email job lease lost"),
        Err(err) => tracing::warn!(job = %job.id, error = %err, "email job not recorded"),
    }
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
