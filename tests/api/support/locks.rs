//! Requests sent while a Postgres row lock holds them, for the tests of
//! what waits for what.

use tokio::task::JoinHandle;

use super::{TestResponse, eventually};

/// Locks the row `lock` selects (a `SELECT … FOR UPDATE` whose one
/// parameter is `id`) in a transaction of its own, then sends `request` and
/// returns once a session waits for a lock: the request, held until the
/// returned transaction ends.
pub async fn send_behind_a_row_lock(
    pool: &sqlx::PgPool,
    lock: &'static str,
    id: uuid::Uuid,
    request: reqwest::RequestBuilder,
) -> (
    sqlx::Transaction<'static, sqlx::Postgres>,
    JoinHandle<TestResponse>,
) {
    let mut holder = pool.begin().await.expect("begin");
    sqlx::query(lock)
        .bind(id)
        .fetch_one(&mut *holder)
        .await
        .expect("lock the row");
    let held = tokio::spawn(async move { TestResponse::from(request.send().await).await });
    wait_for_a_lock_wait(pool, &held).await;
    (holder, held)
}

/// `send_behind_a_row_lock` on the ticket counter of `company_id`: a
/// create of that company (`request`) waits for its number.
pub async fn send_behind_the_ticket_counter(
    pool: &sqlx::PgPool,
    company_id: uuid::Uuid,
    request: reqwest::RequestBuilder,
) -> (
    sqlx::Transaction<'static, sqlx::Postgres>,
    JoinHandle<TestResponse>,
) {
    let lock = "SELECT value FROM counters WHERE company_id = $1 AND name = 'ticket' FOR UPDATE";
    send_behind_a_row_lock(pool, lock, company_id, request).await
}

/// Returns once a session of the test database waits for a lock (the one
/// `request` runs in, which must not finish before that).
async fn wait_for_a_lock_wait(
    pool: &sqlx::PgPool,
    request: &tokio::task::JoinHandle<TestResponse>,
) {
    eventually("a session waits for a lock", async || {
        assert!(
            !request.is_finished(),
            "the request finished without waiting for a lock"
        );
        let waiting: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM pg_stat_activity \
             WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
        .fetch_one(pool)
        .await
        .expect("pg_stat_activity");
        waiting > 0
    })
    .await
}
