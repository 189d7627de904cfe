//! The statement timeout on Postgres: a request whose statement runs past
//! it is answered 503 `timeout`, never 500, and the server stops the
//! statement.

use std::time::Duration;

use serde_json::json;

use crate::postgres_tests;
use crate::support::{Backend, TestApp, TestResponse};

postgres_tests!(a_statement_past_the_timeout_answers_503_timeout);

/// A create waits for a lock the test holds on its entity row (the
/// ticket's foreign key check needs it) until the statement timeout
/// cancels it: a statement that runs too long, whatever makes it slow.
async fn a_statement_past_the_timeout_answers_503_timeout(backend: Backend) {
    let app = TestApp::spawn_with(backend, |config| {
        config.statement_timeout = Some(Duration::from_secs(1));
    })
    .await;
    let acme = app.company().await;
    let pool = app.postgres_pool().sqlx();
    let mut holder = pool.begin().await.expect("begin");
    sqlx::query("SELECT id FROM entities WHERE id = $1 FOR UPDATE")
        .bind(acme.entity.id)
        .fetch_one(&mut *holder)
        .await
        .expect("lock the entity");

    let request = app
        .api(reqwest::Method::POST, "/tickets", Some(&acme.key))
        .json(&json!({"subject": "Stuck", "entityId": acme.entity.id}));
    // Without the timeout the create would wait for the lock as long as
    // the test holds it.
    let answered = tokio::time::timeout(Duration::from_secs(20), request.send())
        .await
        .expect("answered once the statement timed out");
    let r = TestResponse::from(answered).await;
    r.assert_error(503, "timeout");
    holder.rollback().await.expect("release the entity");
}
