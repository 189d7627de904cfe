//! Typed custom fields: definitions (`/settings/custom-fields`), values on
//! tickets and chat sessions (validation, required, merge and clearing,
//! events and timeline), the widget's visitor-writable fields, and the
//! `cf.` list filters. Shared helpers here; the tests in the submodules.

mod definitions;
mod filters;
mod nodes;
mod sessions;
mod values;

use serde_json::{Value, json};

use crate::backend_tests;
use crate::postgres_tests;
use crate::support::{Backend, TestApp, TestCompany, TestResponse, assert_invalid, updated_events};

/// Defines a field; answers the definition.
async fn define(app: &TestApp, acme: &TestCompany, body: Value) -> Value {
    app.post("/settings/custom-fields", &acme.key, body)
        .await
        .assert_status(201)
        .clone()
}

/// The fields most tests use, on tickets: a text, a number, a boolean, a
/// date, a datetime, a select and a multiselect.
async fn define_ticket_fields(app: &TestApp, acme: &TestCompany) {
    for (key, field_type) in [
        ("order_id", "text"),
        ("order_total", "number"),
        ("churned", "boolean"),
        ("renewal", "date"),
        ("last_seen", "datetime"),
    ] {
        define(
            app,
            acme,
            json!({"key": key, "label": key, "type": field_type, "appliesTo": ["ticket"]}),
        )
        .await;
    }
    define(
        app,
        acme,
        json!({"key": "plan", "label": "Plan", "type": "select", "appliesTo": ["ticket", "chat"],
               "options": ["basic", "pro", "enterprise"]}),
    )
    .await;
    define(
        app,
        acme,
        json!({"key": "features", "label": "Features", "type": "multiselect",
               "appliesTo": ["ticket"], "options": ["api", "sso", "audit"]}),
    )
    .await;
}

/// Creates a ticket (subject and entity filled in) and answers it.
async fn create_ticket(app: &TestApp, acme: &TestCompany, body: Value) -> TestResponse {
    let mut body = body;
    body["entityId"] = json!(acme.entity.id);
    if body.get("subject").is_none() {
        body["subject"] = json!("With fields");
    }
    app.post("/tickets", &acme.key, body).await
}

fn id_of(value: &Value) -> String {
    value["id"].as_str().expect("id").to_string()
}
