//! Work that must commit with every transaction a task opens, without the
//! store functions knowing about it: a layer installs a [`CommitHook`] for
//! the duration of a request (a task-local), and [`Tx::commit`] runs it
//! inside the transaction just before COMMIT. If the hook fails, the
//! transaction is rolled back and the commit fails, so the hook's write
//! and the change commit together or not at all.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;

use super::{Query, Tx};
use vocab::error::StoreError;

pub trait CommitHook: Send + Sync {
    /// Runs inside `tx`, before it commits; an error rolls `tx` back.
    fn before_commit<'a>(&'a self, tx: &'a mut Tx) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Told after a transaction that ran `before_commit` has committed.
    fn committed(&self);

    /// `before_commit`'s write as a CTE of a statement the transaction
    /// runs anyway (Postgres, a round trip less): appends `, {name} AS (…
    /// RETURNING 1)` to `query`, which yields a row exactly when
    /// `before_commit` would answer Ok, and answers true. Answers `query`
    /// as it was and false when there is nothing to write
    /// (`before_commit` would write nothing either).
    fn push_cte(&self, query: Query, name: &str) -> (Query, bool);

    /// The error `before_commit` answers when its write does not hold.
    fn refused(&self) -> StoreError;
}

tokio::task_local! {
    static COMMIT_HOOK: Arc<dyn CommitHook>;
}

/// Runs `work` with `hook` applied to every transaction it commits (in
/// this task; tasks it spawns do not inherit it).
pub async fn with_commit_hook<F: Future>(hook: Arc<dyn CommitHook>, work: F) -> F::Output {
    COMMIT_HOOK.scope(hook, work).await
}

/// Whether the running task has a commit hook: a change that must commit
/// with it cannot be written outside a transaction
/// (`Db::autocommit_after`).
pub fn installed() -> bool {
    COMMIT_HOOK.try_with(|_| ()).is_ok()
}

/// The hook of the running task, if any.
pub(super) fn current() -> Option<Arc<dyn CommitHook>> {
    COMMIT_HOOK.try_with(Arc::clone).ok()
}
