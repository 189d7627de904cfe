//! Bells: a worker that acts on rows other transactions commit (the audit
//! log's sealer) waits on its bell instead of only polling; a transaction
//! that writes such a row rings the bell once it has committed
//! ([`crate::Tx::ring_after_commit`]), never when it rolls back. The bells
//! belong to a pool (the handles of one node share them), so a node's
//! writes wake that node's worker.
//!
//! A ring keeps one permit while nobody waits (tokio's `Notify`), so a
//! ring between two waits is not lost, and many rings while the worker is
//! busy wake it once: its next pass takes everything they committed.

use std::sync::{Arc, Mutex, PoisonError};

use rustc_hash::FxHashMap;
use tokio::sync::Notify;

use crate::{Db, Tx};

/// What a bell is named by: one constant per worker, kept beside it.
pub type BellName = &'static str;

/// A pool's bells, made on first use.
#[derive(Default)]
pub(crate) struct Bells(Mutex<FxHashMap<BellName, Arc<Notify>>>);

impl Bells {
    /// The bell named `name`.
    pub(crate) fn bell(&self, name: BellName) -> Arc<Notify> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(name)
            .or_default()
            .clone()
    }

    pub(crate) fn ring(&self, name: BellName) {
        self.bell(name).notify_one();
    }
}

impl Db {
    /// The bell named `name` of this handle's pool, for the worker that
    /// waits on it.
    pub fn bell(&self, name: BellName) -> Arc<Notify> {
        self.bells().bell(name)
    }

    pub(crate) fn bells(&self) -> &Arc<Bells> {
        match self {
            Db::Postgres(pool) => pool.bells(),
            Db::Sqlite(pool) => pool.bells(),
        }
    }
}

impl Tx {
    /// Rings the bell named `name` once this transaction has committed
    /// (never if it rolls back): it wrote a row for that bell's worker.
    pub fn ring_after_commit(&mut self, name: BellName) {
        if !self.rings.contains(&name) {
            self.rings.push(name);
        }
    }
}

#[cfg(test)]
mod tests {
    use futures::FutureExt;

    use crate::Db;

    const BELL: &str = "test.bell";

    async fn db() -> (Db, tempfile::TempDir) {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite:{}", dir.path().join("bells.db").display());
        (Db::connect(&url).await.expect("connect"), dir)
    }

    #[tokio::test]
    async fn a_committed_ring_wakes_the_waiter() {
        let (db, _dir) = db().await;
        let bell = db.bell(BELL);
        let mut tx = db.begin().await.expect("begin");
        tx.ring_after_commit(BELL);
        assert!(
            bell.notified().now_or_never().is_none(),
            "rung before commit"
        );
        tx.commit().await.expect("commit");
        assert!(bell.notified().now_or_never().is_some());
    }

    #[tokio::test]
    async fn a_rolled_back_ring_wakes_nobody() {
        let (db, _dir) = db().await;
        let bell = db.bell(BELL);
        let mut tx = db.begin().await.expect("begin");
        tx.ring_after_commit(BELL);
        drop(tx);
        assert!(bell.notified().now_or_never().is_none());
    }

    #[tokio::test]
    async fn many_rings_wake_the_waiter_once() {
        let (db, _dir) = db().await;
        let bell = db.bell(BELL);
        for _ in 0..3 {
            let mut tx = db.begin().await.expect("begin");
            tx.ring_after_commit(BELL);
            tx.commit().await.expect("commit");
        }
        assert!(bell.notified().now_or_never().is_some());
        assert!(bell.notified().now_or_never().is_none());
    }
}
