//! SQLite's writers, one at a time in the order they asked.
//!
//! SQLite has one writer per database file. A `BEGIN IMMEDIATE` that finds
//! the write lock taken waits in SQLite's busy handler, which sleeps and
//! retries: no queue, so under a steady write load one caller can lose
//! every retry until its busy timeout runs out and its write fails, while
//! later callers get through. Here the writers of one process take a turn
//! from a first-come-first-served queue (tokio's mutex is fair) before
//! they begin, so the busy handler only ever waits for another process.
//! Every pool of one file shares the queue: two nodes of one process (as
//! the tests start them) take turns too.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, PoisonError, Weak};
use std::time::Duration;

use tokio::sync::{Mutex as FairMutex, OwnedMutexGuard};

/// How long a writer waits for its turn before its write fails as the
/// store being unavailable. Longer than SQLite's busy timeout: the queue
/// is fair, so a long wait means a long queue, not bad luck.
const TURN_TIMEOUT: Duration = Duration::from_secs(30);

/// The queue of one database file's writers.
#[derive(Clone, Debug)]
pub(crate) struct WriteTurns(Arc<FairMutex<()>>);

/// A writer's turn: the next writer's begins when this is dropped.
pub(crate) type Turn = OwnedMutexGuard<()>;

/// The queues of the files this process has open, dropped with their last
/// pool.
static QUEUES: LazyLock<Mutex<HashMap<PathBuf, Weak<FairMutex<()>>>>> =
    LazyLock::new(Default::default);

impl WriteTurns {
    /// The queue of the database at `file`, shared with every other pool of
    /// the same file in this process.
    pub(crate) fn of_file(file: &Path) -> Self {
        let key = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
        let mut queues = QUEUES.lock().unwrap_or_else(PoisonError::into_inner);
        queues.retain(|_, queue| queue.strong_count() > 0);
        if let Some(queue) = queues.get(&key).and_then(Weak::upgrade) {
            return WriteTurns(queue);
        }
        let queue = Arc::new(FairMutex::new(()));
        queues.insert(key, Arc::downgrade(&queue));
        WriteTurns(queue)
    }

    /// Waits for this writer's turn, at most [`TURN_TIMEOUT`].
    pub(crate) async fn take(&self) -> Result<Turn, sqlx::Error> {
        tokio::time::timeout(TURN_TIMEOUT, self.0.clone().lock_owned())
            .await
            .map_err(|_| sqlx::Error::PoolTimedOut)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_pools_of_one_file_share_a_queue() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("shared.db");
        std::fs::write(&file, b"").expect("file");
        let first = WriteTurns::of_file(&file);
        let second = WriteTurns::of_file(&file);
        assert!(Arc::ptr_eq(&first.0, &second.0));
    }

    #[test]
    fn pools_of_two_files_have_a_queue_each() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = WriteTurns::of_file(&dir.path().join("first.db"));
        let second = WriteTurns::of_file(&dir.path().join("second.db"));
        assert!(!Arc::ptr_eq(&first.0, &second.0));
    }

    #[tokio::test]
    async fn writers_take_their_turns_in_the_order_they_asked() {
        let dir = tempfile::tempdir().expect("tempdir");
        let turns = WriteTurns::of_file(&dir.path().join("order.db"));
        let first = turns.take().await.expect("first turn");
        // Asked in the order 0..5: each is polled once, which queues it.
        let mut asking: Vec<_> = (0..5).map(|_| Box::pin(turns.take())).collect();
        for ask in &mut asking {
            assert!(futures::poll!(ask.as_mut()).is_pending());
        }
        drop(first);
        let mut order = Vec::new();
        while order.len() < asking.len() {
            for (writer, ask) in asking.iter_mut().enumerate() {
                if order.contains(&writer) {
                    continue;
                }
                if let std::task::Poll::Ready(turn) = futures::poll!(ask.as_mut()) {
                    order.push(writer);
                    drop(turn.expect("turn"));
                }
            }
        }
        assert_eq!(order, vec![0, 1, 2, 3, 4]);
    }
}
