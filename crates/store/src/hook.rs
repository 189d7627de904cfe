//! Work that must commit with every transaction of a request, without the
//! store functions knowing about it: the request's `Db` handle carries a
//! [`CommitHook`] (`Db::with_commit_hook`), and [`Tx::commit`] of each
//! transaction begun from that handle runs it inside the transaction just
//! before COMMIT. If the hook fails, the transaction is rolled back and
//! the commit fails, so the hook's write and the change commit together or
//! not at all.

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
