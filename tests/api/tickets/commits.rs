//! How a plain create commits: on Postgres in its one statement when
//! nothing else must commit with it, in a transaction when a webhook waits
//! for its `ticket.created`; either way with its delivery queued.

use super::*;
use crate::outbound::support::{create_webhook, deliveries};

backend_tests!(a_webhook_subscribed_after_a_create_gets_the_next_one);
postgres_tests!(
    a_plain_create_commits_in_its_own_statement,
    a_create_that_queues_a_delivery_begins_its_transaction_first,
    a_disabled_webhook_lets_creates_commit_by_themselves_again,
);

/// The first create found no webhook; the second, after one subscribed,
/// queues its delivery and takes the next number (on Postgres it tried the
/// statement that commits by itself first, which wrote nothing).
async fn a_webhook_subscribed_after_a_create_gets_the_next_one(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    ticket(&app, &acme, json!({"subject": "Before the webhook"})).await;
    let url = "https://hooks.example.com/in";
    let (webhook, _) = create_webhook(&app, &acme.key, url, &["ticket.created"]).await;

    let second = ticket(&app, &acme, json!({"subject": "After the webhook"})).await;

    assert_eq!(second["ticketNumber"], "TKT-000002");
    let log = deliveries(&app, &acme.key, &webhook).await;
    let events: Vec<&Value> = log.iter().map(|delivery| &delivery["event"]).collect();
    assert_eq!(events, [&json!("ticket.created")]);
}

/// Sends a create of `acme` held at its number's reservation (the test
/// locks the company's ticket counter, which its first create made) and
/// answers whether the reservation was sent with the `BEGIN` of a
/// transaction for the create's statement, then the create's response once
/// the lock is released.
async fn create_held_at_its_reservation(app: &TestApp, acme: &TestCompany) -> (bool, Value) {
    let pool = app.postgres_pool().sqlx();
    let request = app
        .api(reqwest::Method::POST, "/tickets", Some(&acme.key))
        .json(&json!({"subject": "Held", "entityId": acme.entity.id}));
    let (holder, held) =
        crate::support::send_behind_the_ticket_counter(pool, acme.company.id, request).await;
    let waiting: String = sqlx::query_scalar(
        "SELECT query FROM pg_stat_activity \
         WHERE datname = current_database() AND wait_event_type = 'Lock'",
    )
    .fetch_one(pool)
    .await
    .expect("the waiting create's session");
    holder.rollback().await.expect("release the counter");
    let response = held.await.expect("the held create");
    let with_begin = waiting.trim_end().ends_with("; BEGIN");
    (with_begin, response.assert_status(201).clone())
}

/// Postgres: a plain create with no webhook waiting for it writes its row,
/// timeline entry and event in one statement that commits by itself (no
/// `BEGIN` before it, no `COMMIT` after).
async fn a_plain_create_commits_in_its_own_statement(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    ticket(&app, &acme, json!({"subject": "Makes the counter"})).await;

    let (with_begin, created) = create_held_at_its_reservation(&app, &acme).await;

    assert!(
        !with_begin,
        "no transaction begun for the create's statement"
    );
    assert_eq!(created["ticketNumber"], "TKT-000002");
}

/// Postgres: once a create has met a webhook subscribed to
/// `ticket.created`, the company's next create begins its transaction
/// before writing (it queues a delivery with the row).
async fn a_create_that_queues_a_delivery_begins_its_transaction_first(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let url = "https://hooks.example.com/in";
    create_webhook(&app, &acme.key, url, &["ticket.created"]).await;
    ticket(&app, &acme, json!({"subject": "Meets the webhook"})).await;

    let (with_begin, _) = create_held_at_its_reservation(&app, &acme).await;

    assert!(with_begin, "a transaction begun for the create's statement");
}

/// Postgres: a create that reads no subscribed webhook any more (the only
/// one was disabled) lets the company's next create commit by itself again.
async fn a_disabled_webhook_lets_creates_commit_by_themselves_again(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let url = "https://hooks.example.com/in";
    let (webhook, _) = create_webhook(&app, &acme.key, url, &["ticket.created"]).await;
    ticket(&app, &acme, json!({"subject": "Meets the webhook"})).await;
    let path = format!("/company/webhooks/{webhook}");
    let off = app
        .patch(&path, &acme.key, json!({"isActive": false}))
        .await;
    off.assert_status(200);
    ticket(&app, &acme, json!({"subject": "Finds it disabled"})).await;

    let (with_begin, _) = create_held_at_its_reservation(&app, &acme).await;

    assert!(
        !with_begin,
        "no transaction begun for the create's statement"
    );
}
