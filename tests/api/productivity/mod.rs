//! Agent productivity: ticket and chat versions (`ETag`, `If-Match`),
//! macros (personal and shared, preview and apply) and bulk changes.
//! Shared helpers here; the tests in the submodules.

mod bulk;
mod chat_versions;
mod collision;
mod macros;
mod mentions;
mod sending;
mod versions;
mod views;

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{TestApp, TestCompany, TestResponse};

/// A new ticket of `acme` (by its key); its id.
async fn ticket(app: &TestApp, acme: &TestCompany) -> String {
    let r = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": "Printer on fire", "entityId": acme.entity.id,
                   "visitorEmail": "vic@example.com"}),
        )
        .await;
    r.assert_status(201)["id"].as_str().expect("id").to_string()
}

/// `method path` with `key`, the extra `headers` and a JSON `body`.
async fn send_with(
    app: &TestApp,
    method: Method,
    path: &str,
    key: &str,
    headers: &[(&str, &str)],
    body: Value,
) -> TestResponse {
    let mut request = app.api(method, path, Some(key)).json(&body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    TestResponse::from(request.send().await).await
}

/// The ticket as GET answers it.
async fn read_ticket(app: &TestApp, acme: &TestCompany, id: &str) -> TestResponse {
    app.get(&format!("/tickets/{id}"), &acme.key).await
}

/// How many comments (notes included) the ticket has.
async fn comment_count(app: &TestApp, acme: &TestCompany, id: &str) -> i64 {
    let r = app.get(&format!("/tickets/{id}/comments"), &acme.key).await;
    r.assert_status(200)["total"].as_i64().expect("total")
}

/// The names of the company's recorded events (not the change feed's
/// entries that are no event), oldest first.
async fn event_names(app: &TestApp, acme: &TestCompany) -> Vec<String> {
    let rows: Vec<(String,)> = supportdesk::on_db!(&app.state.db, c => sqlx::query_as(
        "SELECT name FROM events WHERE company_id = $1 ORDER BY created_at, id")
        .bind(acme.company.id)
        .fetch_all(c)
        .await
        .expect("events read"));
    rows.into_iter()
        .map(|(name,)| name)
        .filter(|name| supportdesk::events::EVENT_NAMES.contains(&name.as_str()))
        .collect()
}

/// A shared macro of `acme` made with `actions`; its id.
async fn shared_macro(app: &TestApp, acme: &TestCompany, actions: Value) -> String {
    let r = app
        .post(
            "/macros",
            &acme.key,
            json!({"name": "Waiting on customer", "visibility": "shared", "actions": actions}),
        )
        .await;
    r.assert_status(201)["id"].as_str().expect("id").to_string()
}
