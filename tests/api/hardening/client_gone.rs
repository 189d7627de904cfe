//! A statement whose client went away is stopped on Postgres: the request
//! is dropped when its HTTP connection closes, its database connection is
//! closed with it, and the server cancels what the connection was running.

use serde_json::json;

use crate::postgres_tests;
use crate::support::{Backend, TestApp, eventually, send_behind_the_ticket_counter};

postgres_tests!(a_statement_whose_client_went_away_is_stopped);

/// A create waits for the ticket counter's row lock, which the test holds
/// throughout; its client gives up. With no statement timeout, only the
/// client's leaving can end the statement while the lock is held.
async fn a_statement_whose_client_went_away_is_stopped(backend: Backend) {
    let app = TestApp::spawn_with(backend, |config| config.statement_timeout = None).await;
    let acme = app.company().await;
    let first = json!({"subject": "Makes the counter", "entityId": acme.entity.id});
    app.post("/tickets", &acme.key, first)
        .await
        .assert_status(201);
    let pool = app.postgres_pool().sqlx();
    let request = app
        .api(reqwest::Method::POST, "/tickets", Some(&acme.key))
        .json(&json!({"subject": "Abandoned", "entityId": acme.entity.id}));
    let (holder, held) = send_behind_the_ticket_counter(pool, acme.company.id, request).await;

    // Dropping the client's request closes its HTTP connection.
    held.abort();

    eventually("the abandoned statement is gone", async || {
        let waiting: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM pg_stat_activity \
             WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
        .fetch_one(pool)
        .await
        .expect("pg_stat_activity");
        waiting == 0
    })
    .await;
    holder.rollback().await.expect("release the counter");
}
