//! The worker: one step (`start_due`) claims due jobs up to the free slots
//! of the node and starts each on its own task holding one slot, so a slow
//! job holds one slot, not a batch. Tests wait for the step's jobs
//! (`run_due`); the node's loop (`spawn_workers`) runs the same step
//! without waiting and polls again.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::{JoinHandle, JoinSet};

use super::store::{self, Job};
use crate::db::Db;
use crate::error::StoreError;
use crate::time::Clock;

/// Most jobs a node runs at once.
const CONCURRENCY: usize = 32;
/// How often an idle worker looks for due jobs.
const POLL_INTERVAL: Duration = Duration::from_millis(500);
/// How long a stopping worker waits for its jobs in flight.
const DRAIN: Duration = Duration::from_secs(8);

/// Runs the jobs of one kind.
pub trait JobHandler: Send + Sync {
    /// How long a claimed job stays reserved for its worker: longer than
    /// one attempt can take, store writes included.
    fn lease(&self) -> Duration;

    /// Makes one attempt at `job` and ends it with `store::finish`, `retry`
    /// or `abandon`, in the transaction that also writes the handler's own
    /// records, so those change only while the lease holds. Returns false
    /// when the lease was lost (nothing was recorded).
    fn run<'a>(
        &'a self,
        db: &'a Db,
        clock: &'a Clock,
        job: &'a Job,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;
}

/// The handlers of this node, by job kind, and its slots.
pub struct Jobs {
    handlers: Vec<(&'static str, Arc<dyn JobHandler>)>,
    slots: Arc<Semaphore>,
    /// The kind claimed first in the next step: rotates, so no kind starves
    /// another when the slots are few.
    first_kind: AtomicUsize,
}

impl Default for Jobs {
    fn default() -> Self {
        Jobs {
            handlers: Vec::new(),
            slots: Arc::new(Semaphore::new(CONCURRENCY)),
            first_kind: AtomicUsize::new(0),
        }
    }
}

impl Jobs {
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs jobs of `kind` with `handler`.
    pub fn register(mut self, kind: &'static str, handler: impl JobHandler + 'static) -> Self {
        self.handlers.push((kind, Arc::new(handler)));
        self
    }

    /// Up to every free slot, each held until the caller drops it.
    fn take_free_slots(&self) -> Vec<OwnedSemaphorePermit> {
        std::iter::from_fn(|| self.slots.clone().try_acquire_owned().ok()).collect()
    }

    /// The job kinds this node runs.
    pub fn kinds(&self) -> Vec<&'static str> {
        self.handlers.iter().map(|(kind, _)| *kind).collect()
    }

    /// The handlers in this step's order.
    fn in_turn(&self) -> impl Iterator<Item = &(&'static str, Arc<dyn JobHandler>)> {
        let count = self.handlers.len().max(1);
        let first = self.first_kind.fetch_add(1, Ordering::Relaxed) % count;
        self.handlers
            .iter()
            .cycle()
            .skip(first)
            .take(self.handlers.len())
    }
}

/// The jobs one step started.
pub struct Started {
    tasks: JoinSet<()>,
    /// Free slots when the step began.
    pub room: usize,
    /// Jobs claimed (and started).
    pub claimed: usize,
}

impl Started {
    /// Waits for every job of the step; returns how many ran.
    pub async fn wait(mut self) -> usize {
        while self.tasks.join_next().await.is_some() {}
        self.claimed
    }

    /// Lets the jobs run on without this step.
    pub fn detach(mut self) {
        self.tasks.detach_all();
    }
}

/// One step of the worker: claims due jobs of every registered kind, up to
/// the free slots, and starts each on its own task. Dropping the result
/// before `wait` or `detach` cancels the jobs (their leases then lapse and
/// they run again). Store errors are logged and count as nothing claimed.
pub async fn start_due(jobs: &Jobs, db: &Db, clock: &Clock) -> Started {
    let mut slots = jobs.take_free_slots();
    let room = slots.len();
    let mut tasks = JoinSet::new();
    let mut claimed = 0;
    for (kind, handler) in jobs.in_turn() {
        if slots.is_empty() {
            break;
        }
        let limit = i64::try_from(slots.len()).unwrap_or(i64::MAX);
        let due = match store::claim(db, kind, handler.lease(), limit).await {
            Ok(due) => due,
            Err(err) => {
                tracing::warn!(kind, error = %err, "outbox: could not claim jobs");
                continue;
            }
        };
        for job in due {
            let Some(slot) = slots.pop() else { break };
            claimed += 1;
            let (db, clock, handler) = (db.clone(), clock.clone(), handler.clone());
            tasks.spawn(async move {
                run_one(&db, &clock, handler.as_ref(), &job).await;
                drop(slot);
            });
        }
    }
    Started {
        tasks,
        room,
        claimed,
    }
}

/// One step that waits for its jobs; returns how many ran.
pub async fn run_due(jobs: &Jobs, db: &Db, clock: &Clock) -> usize {
    start_due(jobs, db, clock).await.wait().await
}

async fn run_one(db: &Db, clock: &Clock, handler: &dyn JobHandler, job: &Job) {
    match handler.run(db, clock, job).await {
        Ok(true) => {}
        Ok(false) => {
            tracing::warn!(job = %job.id, kind = job.kind, "lease lost; the attempt is not recorded")
        }
        // The lease lapses and the job runs again.
        Err(err) => {
            tracing::warn!(job = %job.id, kind = job.kind, error = %err, "job not recorded")
        }
    }
}

/// Starts this node's worker: `start_due` in a loop, again at once while it
/// fills every free slot, else after a poll interval or when a slot frees
/// up. On shutdown it stops claiming and lets jobs in flight finish briefly
/// (an unfinished one runs again after its lease, on any node).
pub fn spawn_workers(
    jobs: Arc<Jobs>,
    db: Db,
    clock: Clock,
    shutdown: tokio::sync::watch::Receiver<bool>,
) -> Vec<JoinHandle<()>> {
    vec![tokio::spawn(worker_loop(jobs, db, clock, shutdown))]
}

async fn worker_loop(
    jobs: Arc<Jobs>,
    db: Db,
    clock: Clock,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let slots = jobs.slots.clone();
    while !*shutdown.borrow() {
        let started = start_due(&jobs, &db, &clock).await;
        let (room, claimed) = (started.room, started.claimed);
        started.detach();
        if room == 0 {
            tokio::select! {
                slot = slots.acquire() => drop(slot),
                changed = shutdown.changed() => if changed.is_err() { break },
            }
            continue;
        }
        if claimed == room {
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
