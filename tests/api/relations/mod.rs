//! How tickets relate: links (and the parent rule), snoozing and its wake
//! pass, merging and its undo, splitting. Shared helpers here; the tests in the
//! submodules.

mod feed;
mod links;
mod merge;
mod snooze;
mod split;

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::outbound::support::create_webhook;
use crate::support::{Backend, TestApp, TestCompany};

/// Schedulers off: the wake pass runs when the test runs it, and webhook
/// deliveries stay queued with the bodies they will send.
async fn quiet(backend: Backend) -> TestApp {
    TestApp::spawn_with(backend, |c| c.run_workers = false).await
}

/// A ticket of `acme`; its id.
async fn ticket(app: &TestApp, acme: &TestCompany, subject: &str) -> String {
    let body = json!({"subject": subject, "entityId": acme.entity.id});
    app.post("/tickets", &acme.key, body)
        .await
        .assert_status(201)["id"]
        .as_str()
        .expect("id")
        .to_string()
}

async fn get_ticket(app: &TestApp, acme: &TestCompany, id: &str) -> Value {
    app.get(&format!("/tickets/{id}"), &acme.key)
        .await
        .assert_status(200)
        .clone()
}

/// A webhook of `acme` subscribed to `events` (deliveries stay queued).
async fn subscribe(app: &TestApp, acme: &TestCompany, events: &[&str]) {
    create_webhook(app, &acme.key, "http://127.0.0.1:9/hook", events).await;
}

/// The queued webhook bodies of the company, by event name, oldest first.
async fn bodies(app: &TestApp, acme: &TestCompany) -> BTreeMap<String, Vec<Value>> {
    let rows: Vec<(String, String)> = supportdesk::on_db!(&app.state.db, c => sqlx::query_as(
        "SELECT event, body FROM webhook_deliveries WHERE company_id = $1 \
         ORDER BY created_at, id")
        .bind(acme.company.id)
        .fetch_all(c)
        .await
        .expect("deliveries"));
    let mut by_event: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for (event, body) in rows {
        let body = serde_json::from_str(&body).expect("a JSON body");
        by_event.entry(event).or_default().push(body);
    }
    by_event
}

/// How many events named `name` the company recorded.
async fn event_count(app: &TestApp, acme: &TestCompany, name: &str) -> i64 {
    supportdesk::on_db!(&app.state.db, c => sqlx::query_scalar(
        "SELECT COUNT(*) FROM events WHERE company_id = $1 AND name = $2")
        .bind(acme.company.id)
        .bind(name)
        .fetch_one(c)
        .await
        .expect("events counted"))
}

/// `(ticketId, kind)` of each of the ticket's links.
fn links_of(ticket: &Value) -> Vec<(String, String)> {
    ticket["links"]
        .as_array()
        .expect("links")
        .iter()
        .map(|l| {
            (
                l["ticketId"].as_str().expect("ticketId").to_string(),
                l["kind"].as_str().expect("kind").to_string(),
            )
        })
        .collect()
}

/// Posts a comment on ticket `id`.
async fn comment(
    app: &TestApp,
    acme: &TestCompany,
    id: &str,
    body: Value,
) -> crate::support::TestResponse {
    app.post(&format!("/tickets/{id}/comments"), &acme.key, body)
        .await
}

/// The number of comments of ticket `id`.
async fn comment_total(app: &TestApp, acme: &TestCompany, id: &str) -> i64 {
    app.get(&format!("/tickets/{id}/comments"), &acme.key)
        .await
        .assert_status(200)["total"]
        .as_i64()
        .expect("total")
}
