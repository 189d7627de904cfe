//! On Postgres feed entries are numbered after their write commits: a write
//! does not wait for the feed's counter row, entries nobody reads still get
//! numbers, and the retention pass keeps an entry until it has one.

use std::time::Duration;

use sqlx::{Connection, PgConnection};

use super::{expire_every_event, id_of, new_ticket, read};
use crate::postgres_tests;
use crate::support::{Backend, TestApp, TestCompany, eventually_within};

postgres_tests!(
    a_write_commits_while_the_feed_counter_row_is_held,
    the_worker_numbers_entries_nobody_reads,
    retention_keeps_an_entry_until_it_is_numbered,
);

fn cursor_of(page: &serde_json::Value) -> String {
    page["nextCursor"].as_str().expect("nextCursor").to_string()
}

fn ids_of(page: &serde_json::Value) -> Vec<String> {
    page["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(id_of)
        .collect()
}

/// Entries of `acme` without a feed number.
async fn unnumbered(connection: &mut PgConnection, acme: &TestCompany) -> i64 {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM events WHERE company_id = $1 AND record_type IS NOT NULL \
         AND seq IS NULL",
    )
    .bind(acme.company.id)
    .fetch_one(connection)
    .await
    .expect("count")
}

/// While another connection holds the company's `changes` counter row, a
/// ticket create still commits (before, every write took that row at its
/// COMMIT and waited here), and the next read of the feed returns it once
/// the row is free.
async fn a_write_commits_while_the_feed_counter_row_is_held(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    new_ticket(&app, &acme, "Numbered").await;
    let cursor = cursor_of(&read(&app, &acme.key, None, 10).await);
    let mut connection = PgConnection::connect(&app.config.database_url)
        .await
        .expect("connect");
    let mut holder = connection.begin().await.expect("begin");
    sqlx::query(
        "SELECT value FROM counters WHERE company_id = $1 AND mode = 'test' \
         AND name = 'changes' FOR UPDATE",
    )
    .bind(acme.company.id)
    .fetch_one(&mut *holder)
    .await
    .expect("the counter row, held");

    let create = new_ticket(&app, &acme, "Beside the held row");
    let created = tokio::time::timeout(Duration::from_secs(10), create)
        .await
        .expect("the create waited for the feed's counter row");
    holder.rollback().await.expect("row released");

    let page = read(&app, &acme.key, Some(&cursor), 10).await;
    assert_eq!(ids_of(&page), vec![id_of(&created)]);
}

/// With no reader of the feed, the worker numbers a new entry by itself.
async fn the_worker_numbers_entries_nobody_reads(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let mut connection = PgConnection::connect(&app.config.database_url)
        .await
        .expect("connect");
    new_ticket(&app, &acme, "Nobody reads this").await;

    eventually_within(
        "the worker numbers every entry",
        Duration::from_secs(15),
        async || unnumbered(&mut connection, &acme).await == 0,
    )
    .await;
}

/// An entry older than retention but not numbered yet survives the pass,
/// so a follower whose cursor is before it still gets it (deleting it
/// would skip it without moving the watermark, and the follower would
/// never learn of the ticket).
async fn retention_keeps_an_entry_until_it_is_numbered(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let cursor = cursor_of(&read(&app, &acme.key, None, 10).await);
    let created = new_ticket(&app, &acme, "Old, not numbered yet").await;
    expire_every_event(&app).await;

    let page = read(&app, &acme.key, Some(&cursor), 10).await;

    assert_eq!(ids_of(&page), vec![id_of(&created)]);
}
