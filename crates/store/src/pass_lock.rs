//! One node at a time for a periodic pass (escalation rules, retention): on
//! Postgres a transaction holding `pg_try_advisory_xact_lock`, released when
//! the pass ends, or by the rollback if the task is dropped or the node's
//! connection dies. SQLite serves one node and needs none.

use super::{Backend, Db, Query, Tx};
use vocab::error::StoreError;

/// Held while a node runs a pass.
pub struct PassLock {
    held: Option<Tx>,
    /// What the pass is, for the log line if releasing fails.
    pass: &'static str,
}

impl PassLock {
    /// The lock `key` (one per kind of pass), or None when another node
    /// holds it.
    pub async fn try_take(
        db: &Db,
        key: i64,
        pass: &'static str,
    ) -> Result<Option<PassLock>, StoreError> {
        if db.backend() == Backend::Sqlite {
            return Ok(Some(PassLock { held: None, pass }));
        }
        let mut tx = db.begin().await?;
        let locked: bool = Query::new("SELECT pg_try_advisory_xact_lock($1)")
            .bind(key)
            .fetch_scalar(&mut tx)
            .await?;
        Ok(locked.then_some(PassLock {
            held: Some(tx),
            pass,
        }))
    }

    /// The lock `key`, waiting while another node holds it: for work that
    /// must run once after each wake-up even when another node is already
    /// at it (a mailbox whose reader on another node listed its messages
    /// before the newest arrived).
    pub async fn take(db: &Db, key: i64, pass: &'static str) -> Result<PassLock, StoreError> {
        if db.backend() == Backend::Sqlite {
            return Ok(PassLock { held: None, pass });
        }
        let mut tx = db.begin().await?;
        Query::new("SELECT pg_advisory_xact_lock($1)")
            .bind(key)
            .execute(&mut tx)
            .await?;
        Ok(PassLock {
            held: Some(tx),
            pass,
        })
    }

    pub async fn release(self) {
        if let Some(tx) = self.held
            && let Err(err) = tx.commit().await
        {
            tracing::warn!(error = %err, pass = self.pass, "releasing a pass lock");
        }
    }
}
