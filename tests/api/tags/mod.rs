//! Tags on tickets: normalisation and limits, create / replace / add and
//! remove, concurrent edits, events and timeline, the list filters and the
//! company's tag counts. Shared helpers here; the tests in the submodules.

mod counts;
mod edits;
mod filters;
mod sessions;

use serde_json::{Value, json};

use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany, TestResponse, assert_invalid, updated_events};

async fn ticket(app: &TestApp, acme: &TestCompany, body: Value) -> Value {
    let mut body = body;
    body["entityId"] = json!(acme.entity.id);
    if body.get("subject").is_none() {
        body["subject"] = json!("Tagged");
    }
    app.post("/tickets", &acme.key, body)
        .await
        .assert_status(201)
        .clone()
}

fn id_of(value: &Value) -> String {
    value["id"].as_str().expect("id").to_string()
}

fn tags_of(value: &Value) -> Vec<String> {
    value["tags"]
        .as_array()
        .expect("tags array")
        .iter()
        .map(|t| t.as_str().expect("tag string").to_string())
        .collect()
}

/// The ticket's tags as GET answers them.
async fn stored_tags(app: &TestApp, key: &str, id: &str) -> Vec<String> {
    let r = app.get(&format!("/tickets/{id}"), key).await;
    tags_of(r.assert_status(200))
}

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| v.to_string()).collect()
}

/// Sends 20 `POST {path}` at once, each adding its own tag; all succeed.
/// Returns the 20 tags, sorted.
async fn add_twenty_at_once(app: &TestApp, key: &str, path: &str) -> Vec<String> {
    let requests = (0..20).map(|i| async move {
        app.post(path, key, json!({ "add": [format!("tag{i:02}")] }))
            .await
    });
    for r in futures::future::join_all(requests).await {
        r.assert_status(200);
    }
    (0..20).map(|i| format!("tag{i:02}")).collect()
}
