//! A pooled connection inside a transaction, holding SQLite's write turn
//! while it is open.

use sqlx::{Database, SqlStr};
use sqlx_core::transaction::TransactionManager;

use super::{Conn, Pool};
use crate::write_turn::Turn;

/// A connection inside a transaction. Dropped without a commit, it queues
/// the rollback, and sqlx's ping on taking it back sends it.
pub struct TxConn<DB: Database> {
    conn: Conn<DB>,
    open: bool,
    /// SQLite's writer's turn, given up after the connection (declared
    /// after it, so dropped after it).
    _turn: Option<Turn>,
}

impl<DB: Database> TxConn<DB> {
    /// Begins with `BEGIN`, or with `statement` when given.
    /// On a pool with write turns, the turn is taken first: a writer
    /// waiting in the queue holds no connection the readers could use.
    pub async fn begin(pool: &Pool<DB>, statement: Option<SqlStr>) -> Result<Self, sqlx::Error> {
        let turn = match &pool.shared.write_turns {
            Some(turns) => Some(turns.take().await?),
            None => None,
        };
        let mut conn = pool.acquire().await?;
        let begun = DB::TransactionManager::begin(conn.connection(), statement).await;
        conn.answered();
        begun?;
        Ok(TxConn {
            conn,
            open: true,
            _turn: turn,
        })
    }

    /// The connection, for one statement (see [`Conn::connection`]);
    /// [`TxConn::answered`] once its answer is read.
    pub fn connection(&mut self) -> &mut DB::Connection {
        self.conn.connection()
    }

    /// Says the last statement's answer has been read (see [`Conn::answered`]).
    pub fn answered(&mut self) {
        self.conn.answered();
    }

    /// Whether a transaction is open on the connection (see
    /// [`TxConn::autocommit_after`]).
    pub fn in_transaction(&self) -> bool {
        self.open
    }

    /// Begins the transaction of one made by `autocommit_after`.
    pub async fn begin_now(&mut self) -> Result<(), sqlx::Error> {
        let begun = DB::TransactionManager::begin(self.conn.connection(), None).await;
        self.conn.answered();
        begun?;
        self.open = true;
        Ok(())
    }

    pub async fn commit(mut self) -> Result<(), sqlx::Error> {
        let committed = DB::TransactionManager::commit(self.conn.connection()).await;
        self.conn.answered();
        committed?;
        self.open = false;
        self.conn.finished();
        Ok(())
    }
}

impl TxConn<sqlx::Postgres> {
    /// Runs `statement` (a simple query, which commits by itself) and keeps
    /// the connection with no transaction open: until `begin_now`, each
    /// statement on it commits by itself, and `commit` sends nothing.
    pub async fn autocommit_after(
        pool: &Pool<sqlx::Postgres>,
        statement: SqlStr,
    ) -> Result<Self, sqlx::Error> {
        let mut conn = pool.acquire().await?;
        let done = sqlx::raw_sql(statement).execute(conn.connection()).await;
        conn.answered();
        done?;
        Ok(TxConn {
            conn,
            open: false,
            _turn: None,
        })
    }
}

impl<DB: Database> Drop for TxConn<DB> {
    fn drop(&mut self) {
        if self.open {
            DB::TransactionManager::start_rollback(self.conn.held());
        }
    }
}
