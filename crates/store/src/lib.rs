//! The store connection: one enum over the two sqlx pools, so one build serves
//! SQLite (embedded default) and Postgres (production). Store functions write
//! one SQL text where the dialects agree and branch only where they differ,
//! and run it through [`Query`], which binds the tenant in one place. The
//! `on_db!` macro is for what `Query` does not cover: pool-level calls here
//! and the raw counts of tests that inspect the database.

mod bell;
mod clock;
mod hook;
mod id_lists;
mod new_rows;
mod pass_lock;
pub mod pool;
mod publish;
mod query;
mod reference;
pub mod timing;
mod tx;
mod visibility;
mod write_turn;

pub use bell::BellName;
pub use clock::millis;
pub use hook::CommitHook;
pub use id_lists::IdLists;
pub use new_rows::{After, NewRows};
pub use pass_lock::PassLock;
pub use publish::Publish;
pub use query::{AnyRow, On, Query};
pub use reference::{Table, ensure_reference};
pub use tx::Tx;
pub use visibility::TeamOwned;
pub use vocab::value::{StoredAs, Value};

use std::str::FromStr;
use std::time::Duration;

use sqlx::migrate::Migrator;

/// The schema of each dialect, embedded at build time.
static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("migrations/postgres");
static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("migrations/sqlite");

/// The Postgres migrations' versions and checksums, in order: what a test
/// database template is keyed by, read from the build instead of the
/// checkout it was made in.
pub fn postgres_migrations() -> impl Iterator<Item = (i64, &'static [u8])> {
    POSTGRES_MIGRATIONS
        .iter()
        .map(|migration| (migration.version, &*migration.checksum))
}

use sqlx::pool::PoolOptions;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{AssertSqlSafe, Connection, Postgres, SqlSafeStr, Sqlite};

use pool::{Committing, DIRECT_CONNECTIONS, PING_AFTER_IDLE, Pool, TxConn};
use tx::Open;
use vocab::actor::Actor;

use vocab::error::StoreError;

/// Which SQL dialect a store function must speak when the two differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Postgres,
    Sqlite,
}

#[derive(Clone, Debug)]
pub enum Db {
    Postgres(Pool<Postgres>),
    Sqlite(Pool<Sqlite>),
}

/// Runs the same sqlx expression against whichever pool `$db` (a `&Db`) holds.
/// `$c` is bound to sqlx's pool, usable as an executor.
#[macro_export]
macro_rules! on_db {
    ($db:expr, $c:ident => $body:expr) => {
        match $db {
            $crate::Db::Postgres(pool) => {
                let $c = pool.sqlx();
                $body
            }
            $crate::Db::Sqlite(pool) => {
                let $c = pool.sqlx();
                $body
            }
        }
    };
}

/// sqlx's pool pings every connection before handing it out by default: a
/// full round trip per acquire. It also pings each one it takes back, so
/// only one that has since sat idle for a while is pinged again (the
/// connections it hands out here are those [`pool`] gave back unfinished).
fn checked_when_idle<DB: sqlx::Database>(options: PoolOptions<DB>) -> PoolOptions<DB> {
    options
        .test_before_acquire(false)
        .before_acquire(|connection, meta| {
            Box::pin(async move {
                if meta.idle_for >= PING_AFTER_IDLE {
                    connection.ping().await?;
                }
                Ok(true)
            })
        })
}

const POSTGRES_CONNECTIONS: u32 = 20;
/// How often Postgres checks, while a statement runs, that its client is
/// still connected (a `poll` of the socket, nothing sent).
const CLIENT_CHECK_INTERVAL: Duration = Duration::from_secs(1);
const SQLITE_CONNECTIONS: u32 = 8;

impl Db {
    /// Connects to `url`: `postgres://…` for Postgres, anything else (or
    /// `sqlite:…`) for SQLite, creating the file if needed.
    pub async fn connect(url: &str) -> anyhow::Result<Self> {
        Self::connect_with(url, None).await
    }

    /// Like `connect`, with every statement on Postgres cancelled by the
    /// server after `statement_timeout` (a session setting given when each
    /// connection opens, so it costs no round trip); it then fails with
    /// [`StoreError::TimedOut`]. SQLite has no such setting.
    pub async fn connect_with(
        url: &str,
        statement_timeout: Option<Duration>,
    ) -> anyhow::Result<Self> {
        if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            // A statement whose client is gone is stopped: the pool closes
            // a connection dropped mid-statement (`pool::Conn`), and the
            // server, which otherwise notices only when it next writes to
            // the socket, looks at it this often while a statement runs.
            let mut options = PgConnectOptions::from_str(url)?.options([(
                "client_connection_check_interval",
                format!("{}ms", CLIENT_CHECK_INTERVAL.as_millis()),
            )]);
            if let Some(limit) = statement_timeout {
                let ms = limit.as_millis().max(1);
                options = options.options([("statement_timeout", format!("{ms}ms"))]);
            }
            let timeout = Duration::from_secs(5);
            let pool = checked_when_idle(PgPoolOptions::new())
                .max_connections(POSTGRES_CONNECTIONS + DIRECT_CONNECTIONS)
                .acquire_timeout(timeout)
                .connect_with(options)
                .await?;
            Ok(Db::Postgres(Pool::new(pool, POSTGRES_CONNECTIONS, timeout)))
        } else {
            let options = SqliteConnectOptions::from_str(url)?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .foreign_keys(true)
                // A deleted or overwritten row's bytes are zeroed in the
                // file, not left on a free page: an erased person's data
                // must not stay readable in the database file.
                .pragma("secure_delete", "ON")
                .busy_timeout(Duration::from_secs(10));
            let turns = write_turn::WriteTurns::of_file(options.get_filename());
            let timeout = Duration::from_secs(10);
            let pool = checked_when_idle(SqlitePoolOptions::new())
                .max_connections(SQLITE_CONNECTIONS + DIRECT_CONNECTIONS)
                .acquire_timeout(timeout)
                .connect_with(options)
                .await?;
            let pool = Pool::new(pool, SQLITE_CONNECTIONS, timeout).with_write_turns(turns);
            Ok(Db::Sqlite(pool))
        }
    }

    /// On SQLite, rewrites the database file from its live rows (`VACUUM`:
    /// freed pages and the unused space of pages keep no older copy of an
    /// erased row) and moves the write-ahead log into the file, emptying
    /// it, so no page an erasure overwrote survives in the file or the log;
    /// nothing on Postgres.
    pub async fn checkpoint(&self) -> Result<(), StoreError> {
        const CHECKPOINT_TRIES: usize = 250;
        match self.backend() {
            Backend::Sqlite => {
                Query::new("VACUUM").execute(self).await?;
                // A reader still on an older snapshot (a worker's pass)
                // stops the checkpoint short: it answers busy, and pages
                // of the log not yet copied leave the file's older copies
                // in place. Try again until it went through whole.
                for _ in 0..CHECKPOINT_TRIES {
                    let (busy, _, _): (i64, i64, i64) =
                        Query::new("PRAGMA wal_checkpoint(TRUNCATE)")
                            .fetch_one(self)
                            .await?;
                    if busy == 0 {
                        return Ok(());
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
                Err(StoreError::Database(sqlx::Error::Protocol(
                    "the write-ahead log could not be checkpointed: readers kept it busy".into(),
                )))
            }
            Backend::Postgres => Ok(()),
        }
    }

    pub fn backend(&self) -> Backend {
        match self {
            Db::Postgres(_) => Backend::Postgres,
            Db::Sqlite(_) => Backend::Sqlite,
        }
    }

    /// Applies the migrations of this backend's dialect.
    pub async fn migrate(&self) -> anyhow::Result<()> {
        match self {
            Db::Postgres(pool) => {
                // On a connection of its own without the statement timeout
                // (an index built over a large table may take minutes),
                // closed afterwards so the setting goes nowhere else.
                let mut connection = pool.sqlx().acquire().await?.detach();
                sqlx::raw_sql("SET statement_timeout = 0")
                    .execute(&mut connection)
                    .await?;
                POSTGRES_MIGRATIONS.run(&mut connection).await?;
                connection.close().await?;
            }
            Db::Sqlite(pool) => {
                // sqlx takes no lock on SQLite (Postgres gets an advisory
                // one): two nodes of one process starting together on a
                // new file would both apply the first migration, and one
                // fail. SQLite serves one process, so its turn is taken here.
                static IN_PROCESS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
                let _turn = IN_PROCESS.lock().await;
                SQLITE_MIGRATIONS.run(pool.sqlx()).await?
            }
        }
        Ok(())
    }

    /// Starts a write transaction. On SQLite it is `BEGIN IMMEDIATE`, which
    /// takes the write lock up front: a deferred transaction that later
    /// upgrades fails with SQLITE_BUSY instead of waiting its turn. Before
    /// it, the writer waits in this process's queue of the file's writers
    /// (see `write_turn`), so writes are served in the order they came.
    pub async fn begin(&self) -> Result<Tx, StoreError> {
        let open = match self {
            Db::Postgres(pool) => Open::Postgres(TxConn::begin(pool, None).await?),
            Db::Sqlite(pool) => {
                let immediate = AssertSqlSafe("BEGIN IMMEDIATE").into_sql_str();
                Open::Sqlite(TxConn::begin(pool, Some(immediate)).await?)
            }
        };
        Ok(self.tx(open))
    }

    /// This handle with `hook` run at the commit of every transaction begun
    /// from it (see [`CommitHook`]): a request's handle.
    pub fn with_commit_hook(&self, hook: std::sync::Arc<dyn CommitHook>) -> Db {
        let mut db = self.clone();
        db.committing_mut().hook = Some(hook);
        db
    }

    /// This handle with `actor` named as the maker of every change its
    /// transactions write (timeline entries, events): a request's handle.
    /// A handle no request named is the service's own (workers and passes
    /// act as `system`).
    pub fn acting(&self, actor: Actor) -> Db {
        let mut db = self.clone();
        db.committing_mut().actor = Some(std::sync::Arc::new(actor));
        db
    }

    /// This handle with `request` named as where the changes of its
    /// transactions came from (the audit log's request id, address and
    /// user agent): a request's handle, beside [`Db::acting`].
    pub fn with_request(&self, request: vocab::actor::RequestContext) -> Db {
        let mut db = self.clone();
        db.committing_mut().request = Some(std::sync::Arc::new(request));
        db
    }

    /// Whether the transactions of this handle run a commit hook: a change
    /// that must commit with it cannot be written outside a transaction
    /// (`Db::autocommit_after`).
    pub fn has_commit_hook(&self) -> bool {
        self.committing().hook.is_some()
    }

    /// This handle with `publisher` for the live events of the
    /// transactions begun from it (see [`Publish`]).
    pub fn with_publisher(&self, publisher: std::sync::Arc<dyn Publish>) -> Db {
        let mut db = self.clone();
        db.committing_mut().publisher = Some(publisher);
        db
    }

    fn committing(&self) -> &Committing {
        match self {
            Db::Postgres(pool) => &pool.committing,
            Db::Sqlite(pool) => &pool.committing,
        }
    }

    fn committing_mut(&mut self) -> &mut Committing {
        match self {
            Db::Postgres(pool) => &mut pool.committing,
            Db::Sqlite(pool) => &mut pool.committing,
        }
    }

    fn tx(&self, open: Open) -> Tx {
        Tx {
            open,
            live: Vec::new(),
            committing: self.committing().clone(),
            hook_written: false,
            rings: Vec::new(),
            bells: self.bells().clone(),
        }
    }

    /// Postgres only: runs `prelude` in a transaction of its own, commits
    /// it and begins a write transaction, all in one round trip (one simple
    /// query of several statements). For a short write whose row lock must
    /// not be held until the transaction ends, such as taking the next
    /// ticket number, without a round trip of its own. `prelude` takes no
    /// parameters; what it hands to the transaction it leaves in a session
    /// setting (`set_config(name, value, false)`), which the transaction's
    /// statements read with `current_setting(name)`.
    ///
    /// SQLite has one writer at a time, so its stores take such values
    /// inside their transaction: there this is an error.
    pub async fn begin_after_committing(&self, prelude: &str) -> Result<Tx, StoreError> {
        let pool = self.postgres_only("begin_after_committing")?;
        // A COMMIT of the implicit transaction of a multi-statement query
        // warns that no transaction is in progress: the setting, local to
        // that transaction, keeps the warning from every request's log.
        let statement = format!(
            "SELECT set_config('client_min_messages', 'error', true); {prelude}; COMMIT; BEGIN"
        );
        let statement = AssertSqlSafe(statement).into_sql_str();
        let conn = TxConn::begin(pool, Some(statement)).await?;
        Ok(self.tx(Open::Postgres(conn)))
    }

    /// Postgres only: runs `prelude` in a transaction of its own (one
    /// simple query) and answers a `Tx` that has not begun: each statement
    /// run on it commits by itself until [`Tx::begin_now`], and its
    /// `commit` sends nothing (its after-commit work still runs). For a
    /// change written by one statement (data-modifying CTEs), which then
    /// takes one round trip instead of three (`BEGIN`, the statement,
    /// `COMMIT`). A second statement would not be atomic with the first:
    /// a caller runs one, or begins first.
    pub async fn autocommit_after(&self, prelude: &str) -> Result<Tx, StoreError> {
        let pool = self.postgres_only("autocommit_after")?;
        let prelude = AssertSqlSafe(prelude.to_owned()).into_sql_str();
        let conn = TxConn::autocommit_after(pool, prelude).await?;
        Ok(self.tx(Open::Postgres(conn)))
    }

    /// The Postgres pool, or the error for `what`, a Postgres-only call,
    /// made on SQLite.
    fn postgres_only(&self, what: &str) -> Result<&Pool<Postgres>, StoreError> {
        match self {
            Db::Postgres(pool) => Ok(pool),
            Db::Sqlite(_) => Err(StoreError::Database(sqlx::Error::Configuration(
                format!("{what} is for Postgres").into(),
            ))),
        }
    }

    /// Whether the store answers (for `/readyz`).
    pub async fn ping(&self) -> bool {
        on_db!(self, c => sqlx::query("SELECT 1").execute(c).await.is_ok())
    }

    pub async fn close(&self) {
        match self {
            Db::Postgres(pool) => pool.close().await,
            Db::Sqlite(pool) => pool.close().await,
        }
    }

    /// What the pool's gauges show.
    pub fn connections(&self) -> pool::Counts {
        match self {
            Db::Postgres(pool) => pool.counts(),
            Db::Sqlite(pool) => pool.counts(),
        }
    }
}
