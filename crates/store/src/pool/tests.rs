use std::sync::atomic::{AtomicUsize, Ordering};

use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use sqlx::{Executor, Sqlite};

use super::*;

/// A pool of `connections` over a fresh SQLite file, and how many
/// connections sqlx's pool has taken back so far.
async fn pool(connections: u32) -> (Pool<Sqlite>, Arc<AtomicUsize>, tempfile::TempDir) {
    pool_with(connections, Lifetimes::default()).await
}

async fn pool_with(
    connections: u32,
    lifetimes: Lifetimes,
) -> (Pool<Sqlite>, Arc<AtomicUsize>, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = SqliteConnectOptions::new()
        .filename(dir.path().join("pool.db"))
        .create_if_missing(true);
    let taken_back = Arc::new(AtomicUsize::new(0));
    let counter = taken_back.clone();
    let sqlx = SqlitePoolOptions::new()
        .max_connections(connections + DIRECT_CONNECTIONS)
        .after_release(move |_, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            Box::pin(async { Ok(true) })
        })
        .connect_with(options)
        .await
        .expect("sqlite pool");
    sqlx.execute("CREATE TABLE t (n INTEGER)")
        .await
        .expect("table");
    // That statement's own connection going back does not count.
    taken_back_eventually(&taken_back, 1).await;
    taken_back.store(0, Ordering::SeqCst);
    let pool = Pool::with_lifetimes(sqlx, connections, Duration::from_millis(300), lifetimes);
    (pool, taken_back, dir)
}

async fn insert(connection: &mut sqlx::SqliteConnection) {
    connection
        .execute("INSERT INTO t VALUES (1)")
        .await
        .expect("insert");
}

async fn rows(pool: &Pool<Sqlite>) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM t")
        .fetch_one(pool.sqlx())
        .await
        .expect("count")
}

/// sqlx's pool runs its own release (and ping) in a spawned task.
async fn taken_back_eventually(taken_back: &AtomicUsize, count: usize) -> usize {
    for _ in 0..100 {
        if taken_back.load(Ordering::SeqCst) >= count {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    taken_back.load(Ordering::SeqCst)
}

#[tokio::test]
async fn a_finished_connection_is_parked_and_handed_out_again_without_sqlx() {
    let (pool, taken_back, _dir) = pool(1).await;
    for _ in 0..3 {
        let mut conn = pool.acquire().await.expect("acquire");
        insert(conn.connection()).await;
        conn.finished();
    }
    assert_eq!(pool.parked().len(), 1);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(taken_back.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_unfinished_connection_goes_back_to_sqlx() {
    let (pool, taken_back, _dir) = pool(1).await;
    let mut conn = pool.acquire().await.expect("acquire");
    insert(conn.connection()).await;
    conn.answered();
    drop(conn);
    assert_eq!(taken_back_eventually(&taken_back, 1).await, 1);
    assert_eq!(pool.parked().len(), 0);
}

#[tokio::test]
async fn a_connection_dropped_mid_statement_is_closed_not_given_back() {
    let (pool, taken_back, _dir) = pool(1).await;
    let mut conn = pool.acquire().await.expect("acquire");
    // Its statement was sent and its answer never read (its caller dropped).
    let _ = conn.connection();
    drop(conn);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(taken_back.load(Ordering::SeqCst), 0);
    assert_eq!(pool.parked().len(), 0);
    assert_eq!(
        pool.sqlx().size(),
        0,
        "closed, its place in sqlx's pool freed"
    );
}

#[tokio::test]
async fn a_committed_transaction_parks_its_connection() {
    let (pool, taken_back, _dir) = pool(1).await;
    let mut tx = TxConn::begin(&pool, None).await.expect("begin");
    insert(tx.connection()).await;
    tx.commit().await.expect("commit");
    assert_eq!(pool.parked().len(), 1);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(taken_back.load(Ordering::SeqCst), 0);
    assert_eq!(rows(&pool).await, 1);
}

#[tokio::test]
async fn a_transaction_dropped_uncommitted_is_rolled_back_and_its_connection_checked() {
    let (pool, taken_back, _dir) = pool(1).await;
    let mut tx = TxConn::begin(&pool, None).await.expect("begin");
    insert(tx.connection()).await;
    tx.answered();
    drop(tx);
    assert_eq!(taken_back_eventually(&taken_back, 1).await, 1);
    assert_eq!(rows(&pool).await, 0);
    // The connection serves again, outside any transaction.
    let mut conn = pool.acquire().await.expect("acquire");
    insert(conn.connection()).await;
    conn.finished();
    drop(conn);
    assert_eq!(rows(&pool).await, 1);
}

#[tokio::test]
async fn an_acquire_waits_for_a_held_connection_and_times_out() {
    let (pool, _taken_back, _dir) = pool(1).await;
    let mut held = pool.acquire().await.expect("acquire");
    held.finished();
    let waiting = tokio::spawn({
        let pool = pool.clone();
        async move { pool.acquire().await.map(|_| ()) }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    drop(held);
    assert!(waiting.await.expect("task").is_ok());

    let _held = pool.acquire().await.expect("acquire");
    let timed_out = pool.acquire().await.map(|_| ());
    assert!(matches!(timed_out, Err(sqlx::Error::PoolTimedOut)));
}

async fn use_and_finish(pool: &Pool<Sqlite>) -> Conn<Sqlite> {
    let mut conn = pool.acquire().await.expect("acquire");
    conn.connection().execute("SELECT 1").await.expect("select");
    conn.finished();
    conn
}

#[tokio::test]
async fn parked_connections_idle_past_the_limit_are_closed_at_the_next_park() {
    let idle = Duration::from_millis(300);
    let lifetimes = Lifetimes {
        idle,
        ..Lifetimes::default()
    };
    let (pool, _taken_back, _dir) = pool_with(2, lifetimes).await;
    let (first, second) = (use_and_finish(&pool).await, use_and_finish(&pool).await);
    drop(first);
    tokio::time::sleep(idle).await;
    drop(second);
    // The first had sat idle past the limit: parking the second closed it.
    assert_eq!(pool.parked().len(), 1);
    drop(use_and_finish(&pool).await);
    assert_eq!(pool.parked().len(), 1);
}

#[tokio::test]
async fn a_connection_kept_past_its_renewal_goes_back_to_sqlx() {
    let renew = Duration::from_millis(200);
    let lifetimes = Lifetimes {
        renew,
        ..Lifetimes::default()
    };
    let (pool, taken_back, _dir) = pool_with(1, lifetimes).await;
    drop(use_and_finish(&pool).await);
    assert_eq!(pool.parked().len(), 1);
    tokio::time::sleep(renew).await;
    drop(use_and_finish(&pool).await);
    assert_eq!(pool.parked().len(), 0);
    assert_eq!(taken_back_eventually(&taken_back, 1).await, 1);
}
