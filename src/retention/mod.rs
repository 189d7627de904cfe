//! The retention pass: keeps the delivery log, the attempts, the finished
//! jobs and the `events` table from growing without end, deletes closed
//! chats with their files once they have a retention (`chats`), and drops
//! each company's own closed tickets, closed chats and contacts past its
//! data retention (`policies`), and drops the start of each company's
//! audit chain past the company's retention (`audit`). Each node runs the
//! pass every `retention_interval`; on Postgres an advisory lock lets one
//! node at a time run it. Every DELETE removes at most [`BATCH`] rows, so no
//! statement holds its locks for long, and nothing pending or leased is
//! ever deleted. `run_pass` is public so tests drive it step by step.

pub mod audit;
pub mod chats;
pub mod policies;
pub mod routes;
pub mod store;

use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinHandle;

use std::sync::Arc;

use crate::attachments::Attachments;
use crate::config::Config;
use crate::db::Db;
use crate::error::StoreError;
use crate::time::{Clock, Timestamp};
use store::{Cutoff, TARGETS, Target};

/// Most rows one DELETE statement removes.
pub const BATCH: u64 = 1_000;

/// What one pass deleted from one table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableReport {
    pub table: &'static str,
    pub rows_deleted: u64,
    /// Statements that deleted at least one row.
    pub batches: u64,
    /// The most rows one statement deleted.
    pub largest_batch: u64,
}

/// What one pass did, table by table, and how long it took.
#[derive(Debug, Clone)]
pub struct PassReport {
    pub tables: Vec<TableReport>,
    pub took: Duration,
}

impl PassReport {
    /// The report of `table`, if the pass visits it.
    pub fn table(&self, table: &str) -> Option<&TableReport> {
        self.tables.iter().find(|report| report.table == table)
    }

    pub fn rows_deleted(&self) -> u64 {
        self.tables.iter().map(|report| report.rows_deleted).sum()
    }
}

/// How old rows may grow, from the configuration.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    /// Finished deliveries with their attempts, and events.
    pub retention: Duration,
    /// Finished (done or failed) jobs.
    pub job_retention: Duration,
    /// Closed chat sessions with their messages and files; `None` keeps
    /// them.
    pub chat_retention: Option<Duration>,
}

impl Policy {
    pub fn from_config(config: &Config) -> Policy {
        Policy {
            retention: config.retention,
            job_retention: config.job_retention,
            chat_retention: config.chat_retention,
        }
    }

    fn cutoff(&self, cutoff: Cutoff, now: Timestamp) -> Timestamp {
        let age = match cutoff {
            Cutoff::Retention => self.retention,
            Cutoff::JobRetention => self.job_retention,
            Cutoff::Expiry => Duration::ZERO,
        };
        before(now, age)
    }
}

/// `age` before `now`; an age beyond what a date can hold keeps everything.
fn before(now: Timestamp, age: Duration) -> Timestamp {
    let age = chrono::Duration::from_std(age).unwrap_or(chrono::Duration::MAX);
    Timestamp::from_datetime(
        now.0
            .checked_sub_signed(age)
            .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC),
    )
}

/// One pass over every target, batch after batch until a batch comes back
/// short, then over closed chats when they have a retention (their files'
/// bytes removed from the attachments' storage, the tickets made from them
/// recorded with their links signed by the attachments' signer), then over the audit log of each company
/// with a retention, with cut-offs counted back from `now`
/// (the node's clock). Returns its report, or None when another node holds
/// the pass.
pub async fn run_pass(
    db: &Db,
    attachments: &Attachments,
    policy: Policy,
    now: Timestamp,
) -> Result<Option<PassReport>, StoreError> {
    let Some(lock) = store::lock_pass(db).await? else {
        return Ok(None);
    };
    let started = Instant::now();
    let mut tables = Vec::with_capacity(TARGETS.len());
    for target in TARGETS {
        match purge(db, target, policy.cutoff(target.cutoff, now)).await {
            Ok(report) => tables.push(report),
            Err(err) => {
                lock.release().await;
                return Err(err);
            }
        }
    }
    if let Some(age) = policy.chat_retention {
        match chats::purge(db, attachments, None, before(now, age), now).await {
            Ok(report) => tables.push(report),
            Err(err) => {
                lock.release().await;
                return Err(err);
            }
        }
    }
    match policies::purge(db, attachments, now).await {
        Ok(reports) => tables.extend(reports),
        Err(err) => {
            lock.release().await;
            return Err(err);
        }
    }
    match audit::prune(db, now).await {
        Ok(report) => tables.push(report),
        Err(err) => {
            lock.release().await;
            return Err(err);
        }
    }
    lock.release().await;
    let report = PassReport {
        tables,
        took: started.elapsed(),
    };
    log(&report);
    Ok(Some(report))
}

/// Deletes `target`'s rows older than `cutoff`, `BATCH` rows at a time.
async fn purge(db: &Db, target: &Target, cutoff: Timestamp) -> Result<TableReport, StoreError> {
    let limit = i64::try_from(BATCH).unwrap_or(i64::MAX);
    let mut report = TableReport {
        table: target.table,
        ..TableReport::default()
    };
    loop {
        // Deleting change feed entries also raises the feed's watermark.
        let deleted = if target.table == "events" {
            store::delete_events_batch(db, cutoff, limit).await?
        } else {
            store::delete_batch(db, target, cutoff, limit).await?
        };
        if deleted > 0 {
            report.rows_deleted += deleted;
            report.batches += 1;
            report.largest_batch = report.largest_batch.max(deleted);
        }
        if deleted < BATCH {
            return Ok(report);
        }
    }
}

fn log(report: &PassReport) {
    let deleted: Vec<String> = report
        .tables
        .iter()
        .map(|table| format!("{}={}", table.table, table.rows_deleted))
        .collect();
    tracing::info!(
        took_ms = report.took.as_millis(),
        deleted = %deleted.join(" "),
        "retention pass"
    );
}

/// Runs a pass every `every` (the retention interval; the first one
/// interval after start) until shutdown. A pass interrupted by shutdown
/// stops between statements; each batch commits on its own.
pub fn spawn(
    db: Db,
    attachments: Arc<Attachments>,
    clock: Clock,
    policy: Policy,
    every: Duration,
    shutdown: watch::Receiver<bool>,
) -> JoinHandle<()> {
    let every = every.max(Duration::from_millis(10));
    let first = tokio::time::Instant::now() + every;
    crate::time::every(shutdown, first, every, move || {
        let (db, attachments, now) = (db.clone(), attachments.clone(), clock.now());
        async move {
            if let Err(err) = run_pass(&db, &attachments, policy, now).await {
                tracing::warn!(error = %err, "retention pass failed");
            }
        }
    })
}
