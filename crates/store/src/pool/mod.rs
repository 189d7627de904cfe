//! The connections the stores use, kept in front of sqlx's pool.
//!
//! sqlx's pool pings every connection it gets back, whatever the last
//! statement did: one more round trip to the server per use, which made a
//! one-query read three round trips (the ping before the acquire as well)
//! and woke the server's backend twice for nothing. Here a connection whose
//! last statement finished cleanly is parked instead, and handed out again
//! as is; sqlx still opens, counts and closes connections. One that did not
//! finish cleanly (an error, a transaction that did not commit) goes back
//! to sqlx, whose ping flushes or discards it. One dropped while a
//! statement is still running on it (its request was dropped: the client
//! went away) is closed instead, so that the server stops the statement.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use sqlx::pool::PoolConnection;
use sqlx::{Connection, Database};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::write_turn::WriteTurns;

mod tx_conn;
pub use tx_conn::TxConn;

/// How long a connection may sit idle and still be handed out without a
/// ping first: a server restart or a proxy's idle cut shows then, and the
/// connection is replaced instead of failing a request.
pub const PING_AFTER_IDLE: Duration = Duration::from_secs(1);

/// Connections beyond the stores' own, in sqlx's pool, for the few callers
/// that use it directly (the migrations, the demo's advisory lock, tests):
/// the parked connections count as taken there, and must not starve them.
pub const DIRECT_CONNECTIONS: u32 = 4;

/// How long connections are kept. sqlx closes a connection idle for 10
/// minutes, and one 30 minutes old when it comes back (its defaults): the
/// same limits hold for parked connections, so a node's connections still
/// shrink after a burst and the server's sessions are still renewed.
#[derive(Debug, Clone, Copy)]
pub struct Lifetimes {
    /// A parked connection idle this long is closed.
    pub idle: Duration,
    /// A connection this long in this pool is given back to sqlx.
    pub renew: Duration,
}

impl Default for Lifetimes {
    fn default() -> Self {
        Lifetimes {
            idle: Duration::from_secs(10 * 60),
            renew: Duration::from_secs(30 * 60),
        }
    }
}

pub struct Pool<DB: Database> {
    shared: Arc<Shared<DB>>,
    /// What the transactions begun on this handle do at commit.
    pub(crate) committing: Committing,
}

impl<DB: Database> Clone for Pool<DB> {
    fn clone(&self) -> Self {
        Pool {
            shared: self.shared.clone(),
            committing: self.committing.clone(),
        }
    }
}

/// What the transactions begun on one handle of a pool do besides
/// committing: run its commit hook (a request's), hand their live
/// events to its publisher, and name who their changes are made by. Handles
/// of one pool share its connections, not this.
#[derive(Clone, Default)]
pub(crate) struct Committing {
    pub(crate) hook: Option<Arc<dyn crate::CommitHook>>,
    pub(crate) publisher: Option<Arc<dyn crate::Publish>>,
    /// The actor of a request's handle; None is the service itself.
    pub(crate) actor: Option<Arc<vocab::actor::Actor>>,
    /// Where a request's handle's changes came from (the audit log's
    /// request id, address and user agent); None outside a request.
    pub(crate) request: Option<Arc<vocab::actor::RequestContext>>,
}

impl<DB: Database> std::fmt::Debug for Pool<DB> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("sqlx", &self.shared.sqlx)
            .field("parked", &self.parked().len())
            .finish()
    }
}

struct Shared<DB: Database> {
    sqlx: sqlx::Pool<DB>,
    /// Last in, first out: the busiest connections stay warm and the rest
    /// sit idle long enough to be pinged before their next use.
    parked: Mutex<Vec<Parked<DB>>>,
    /// One per connection the stores may hold at once.
    permits: Arc<Semaphore>,
    connections: u32,
    acquire_timeout: Duration,
    lifetimes: Lifetimes,
    /// SQLite's: the queue its write transactions wait in (see
    /// [`crate::write_turn`]). None on Postgres, whose writers lock rows.
    write_turns: Option<WriteTurns>,
    /// The workers' bells (see [`crate::bell`]).
    bells: Arc<crate::bell::Bells>,
}

/// What the pool's gauges show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub idle: u32,
    pub in_use: u32,
    pub max: u32,
}

struct Parked<DB: Database> {
    connection: PoolConnection<DB>,
    /// When sqlx handed it to this pool (it may have been open before).
    taken: Instant,
    since: Instant,
}

impl<DB: Database> Pool<DB> {
    /// Serves up to `connections` at once from `sqlx`, whose size must be
    /// `connections` + [`DIRECT_CONNECTIONS`].
    pub fn new(sqlx: sqlx::Pool<DB>, connections: u32, acquire_timeout: Duration) -> Self {
        Self::with_lifetimes(sqlx, connections, acquire_timeout, Lifetimes::default())
    }

    pub fn with_lifetimes(
        sqlx: sqlx::Pool<DB>,
        connections: u32,
        acquire_timeout: Duration,
        lifetimes: Lifetimes,
    ) -> Self {
        Pool {
            shared: Arc::new(Shared {
                sqlx,
                parked: Mutex::new(Vec::new()),
                permits: Arc::new(Semaphore::new(connections as usize)),
                connections,
                acquire_timeout,
                lifetimes,
                write_turns: None,
                bells: Arc::default(),
            }),
            committing: Committing::default(),
        }
    }

    /// This pool with its write transactions queued in `turns` (SQLite's).
    /// Called on a pool no clone of which exists yet.
    pub(crate) fn with_write_turns(mut self, turns: WriteTurns) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.write_turns = Some(turns);
        }
        self
    }

    /// The pool's bells, shared by its handles.
    pub(crate) fn bells(&self) -> &Arc<crate::bell::Bells> {
        &self.shared.bells
    }

    /// sqlx's pool, for the callers that use it directly.
    pub fn sqlx(&self) -> &sqlx::Pool<DB> {
        &self.shared.sqlx
    }

    /// A connection: a parked one (pinged first if it sat idle for
    /// [`PING_AFTER_IDLE`]), else one from sqlx's pool.
    pub async fn acquire(&self) -> Result<Conn<DB>, sqlx::Error> {
        let timeout = self.shared.acquire_timeout;
        tokio::time::timeout(timeout, self.acquire_within())
            .await
            .map_err(|_| sqlx::Error::PoolTimedOut)?
    }

    async fn acquire_within(&self) -> Result<Conn<DB>, sqlx::Error> {
        let permit = self
            .shared
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| sqlx::Error::PoolClosed)?;
        loop {
            let Some(parked) = self.parked().pop() else {
                break;
            };
            let mut connection = parked.connection;
            if parked.since.elapsed() < PING_AFTER_IDLE || connection.ping().await.is_ok() {
                return Ok(self.hand_out(connection, parked.taken, permit));
            }
            // Dead: sqlx closes it and frees its place.
            connection.close_on_drop();
        }
        let connection = self.shared.sqlx.acquire().await?;
        Ok(self.hand_out(connection, Instant::now(), permit))
    }

    fn hand_out(
        &self,
        connection: PoolConnection<DB>,
        taken: Instant,
        permit: OwnedSemaphorePermit,
    ) -> Conn<DB> {
        Conn {
            connection: Some(connection),
            taken,
            finished: false,
            running: false,
            shared: self.shared.clone(),
            _permit: permit,
        }
    }

    /// Connections idle (parked here or in sqlx's pool), held by the
    /// stores, and the most the stores may hold.
    pub fn counts(&self) -> Counts {
        let parked = u32::try_from(self.parked().len()).unwrap_or(u32::MAX);
        let sqlx_idle = u32::try_from(self.shared.sqlx.num_idle()).unwrap_or(u32::MAX);
        let available = u32::try_from(self.shared.permits.available_permits()).unwrap_or(0);
        Counts {
            idle: parked.saturating_add(sqlx_idle),
            in_use: self.shared.connections.saturating_sub(available),
            max: self.shared.connections,
        }
    }

    /// Closes every connection: the parked ones now, the others as their
    /// holders give them back.
    pub async fn close(&self) {
        self.shared.permits.close();
        let parked = std::mem::take(&mut *self.parked());
        for mut parked in parked {
            parked.connection.close_on_drop();
        }
        self.shared.sqlx.close().await;
    }

    fn parked(&self) -> MutexGuard<'_, Vec<Parked<DB>>> {
        self.shared
            .parked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// A connection held by one caller. It is parked again when dropped only
/// if [`Conn::finished`] was called after its last use; otherwise sqlx
/// takes it back and checks it.
pub struct Conn<DB: Database> {
    connection: Option<PoolConnection<DB>>,
    taken: Instant,
    finished: bool,
    /// A statement was sent and its answer not yet read (see
    /// [`Conn::answered`]).
    running: bool,
    shared: Arc<Shared<DB>>,
    _permit: OwnedSemaphorePermit,
}

impl<DB: Database> Conn<DB> {
    /// The connection, for one statement: marks it unfinished until
    /// [`Conn::finished`], and the statement running until
    /// [`Conn::answered`].
    pub fn connection(&mut self) -> &mut DB::Connection {
        self.finished = false;
        self.running = true;
        self.held()
    }

    /// The connection without starting a statement (queueing a rollback).
    fn held(&mut self) -> &mut DB::Connection {
        match self.connection.as_mut() {
            Some(connection) => connection,
            None => unreachable!("a Conn holds its connection until dropped"),
        }
    }

    /// Says the statement's answer (rows or an error) has been read: the
    /// caller was not dropped while the server worked on it.
    pub fn answered(&mut self) {
        self.running = false;
    }

    /// Says the last statement ran to completion and left nothing pending
    /// on the connection (no open transaction, no unread reply).
    pub fn finished(&mut self) {
        self.finished = true;
        self.running = false;
    }
}

impl<DB: Database> Drop for Conn<DB> {
    fn drop(&mut self) {
        let Some(connection) = self.connection.take() else {
            return;
        };
        if self.running {
            // Its caller was dropped mid-statement. sqlx's check on taking
            // it back would wait for the statement to end, while the server
            // goes on running it for nobody. Closing the socket instead lets
            // the server see the client gone and cancel the statement
            // (Postgres: `client_connection_check_interval`); sqlx opens a
            // new connection in its place when one is needed.
            drop(connection.detach());
            return;
        }
        let lifetimes = self.shared.lifetimes;
        let renew = self.taken.elapsed() >= lifetimes.renew;
        // Parked if its work finished cleanly; if not, dropping it hands it
        // to sqlx, which pings it (and closes it past sqlx's lifetime).
        if self.finished && !renew && !self.shared.permits.is_closed() {
            let parked = Parked {
                connection,
                taken: self.taken,
                since: Instant::now(),
            };
            let stale = park(&self.shared.parked, parked, lifetimes.idle);
            // Closed outside the lock: each close is a task of sqlx's.
            for mut stale in stale {
                stale.connection.close_on_drop();
            }
        }
    }
}

/// Parks `parked` on top and takes out those parked at the bottom (the
/// least recently used) that have been idle for `idle_limit`.
fn park<DB: Database>(
    stack: &Mutex<Vec<Parked<DB>>>,
    parked: Parked<DB>,
    idle_limit: Duration,
) -> Vec<Parked<DB>> {
    let mut stack = stack.lock().unwrap_or_else(PoisonError::into_inner);
    let stale = stack
        .iter()
        .take_while(|old| old.since.elapsed() >= idle_limit)
        .count();
    let stale = stack.drain(..stale).collect();
    stack.push(parked);
    stale
}

#[cfg(test)]
mod tests;
