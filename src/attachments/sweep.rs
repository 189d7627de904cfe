//! The sweeper: deletes uploads left unattached past their age (a
//! visitor's sooner than a key's), then the
//! stored bytes no upload names any more (those of deleted tickets,
//! comments and messages too, whose rows went with them). Each object is
//! dropped in its own transaction that holds its row while the bytes are
//! removed, so an upload of the same bytes meanwhile waits and stores them
//! again. `run_pass` is public so tests drive it.

use std::sync::Arc;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::Attachments;
use super::storage::Storage;
use super::store;
use crate::db::Db;
use crate::error::StoreError;
use crate::time::{Clock, Timestamp};

/// Most rows or objects one statement or pass step handles.
const BATCH: i64 = 500;

/// What one pass deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SweepReport {
    pub uploads: u64,
    pub objects: u64,
}

/// Deletes old unattached uploads, then unnamed objects, batch after batch;
/// ages are counted back from `now` (the node's clock, which stamped the
/// uploads).
pub async fn run_pass(
    db: &Db,
    attachments: &Attachments,
    now: Timestamp,
) -> Result<SweepReport, StoreError> {
    let mut report = SweepReport::default();
    let cutoff = now.minus(attachments.orphan_age);
    let visitor_cutoff = now.minus(attachments.visitor_orphan_age);
    loop {
        let deleted = store::delete_orphans(db, cutoff, visitor_cutoff, BATCH).await?;
        report.uploads += deleted;
        if deleted < BATCH as u64 {
            break;
        }
    }
    loop {
        let unnamed = store::unnamed_objects(db, BATCH).await?;
        for (company, sha256) in &unnamed {
            if drop_object(db, &attachments.storage, *company, sha256).await? {
                report.objects += 1;
            }
        }
        if unnamed.len() < BATCH as usize {
            return Ok(report);
        }
    }
}

/// Removes at once the bytes of `hashes` that no attachment of `company`
/// names any more (a deleted record's files); bytes another record still
/// uses stay. A failure leaves the object to the next sweep.
pub async fn release(db: &Db, storage: &Storage, company: uuid::Uuid, hashes: &[String]) {
    for sha256 in hashes {
        if let Err(err) = drop_object(db, storage, company, sha256).await {
            tracing::warn!(error = %err, "releasing attachment bytes failed");
        }
    }
}

async fn drop_object(
    db: &Db,
    storage: &Storage,
    company: uuid::Uuid,
    sha256: &str,
) -> Result<bool, StoreError> {
    let mut tx = db.begin().await?;
    if !store::drop_object(&mut tx, company, sha256).await? {
        return Ok(false);
    }
    let key = Storage::object_key(company, sha256);
    if let Err(err) = storage.remove(&key).await {
        // Keep the row: the next pass tries again.
        tracing::warn!(error = %err, "removing attachment bytes failed");
        return Ok(false);
    }
    tx.commit().await?;
    Ok(true)
}

/// Runs a pass every `every` (the retention interval) until shutdown.
pub fn spawn(
    db: Db,
    attachments: Arc<Attachments>,
    clock: Clock,
    every: std::time::Duration,
    shutdown: watch::Receiver<bool>,
) -> JoinHandle<()> {
    let every = every.max(std::time::Duration::from_millis(10));
    let first = tokio::time::Instant::now() + every;
    crate::time::every(shutdown, first, every, move || {
        let (db, now) = (db.clone(), clock.now());
        let attachments = attachments.clone();
        async move {
            match run_pass(&db, &attachments, now).await {
                Ok(report) if report != SweepReport::default() => {
                    tracing::info!(?report, "attachment sweep");
                }
                Ok(_) => {}
                Err(err) => tracing::warn!(error = %err, "attachment sweep failed"),
            }
        }
    })
}
