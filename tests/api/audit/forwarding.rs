//! The `audit.entry` webhook event: sent once an entry is sealed, to the
//! webhooks that name it, and to no other.

use serde_json::{Value, json};

use super::seal;
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    a_sealed_entry_is_sent_to_a_webhook_that_names_audit_entry,
    a_webhook_not_naming_audit_entry_gets_none,
);

async fn webhook(app: &TestApp, acme: &TestCompany, events: &[&str]) -> String {
    let body = json!({"name": "SIEM", "url": "http://127.0.0.1:9/hook", "events": events});
    app.post("/company/webhooks", &acme.key, body)
        .await
        .assert_status(201)["id"]
        .as_str()
        .expect("id")
        .to_owned()
}

/// The events of the deliveries queued for webhook `id`.
async fn delivered_events(app: &TestApp, acme: &TestCompany, id: &str) -> Vec<Value> {
    app.get(
        &format!("/company/webhooks/{id}/deliveries?limit=100"),
        &acme.key,
    )
    .await
    .assert_status(200)["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|d| d["event"].clone())
        .collect()
}

async fn a_sealed_entry_is_sent_to_a_webhook_that_names_audit_entry(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let id = webhook(&app, &acme, &["audit.entry"]).await;
    app.post(
        "/roles",
        &acme.key,
        json!({"name": "R", "scopes": ["tickets:read"]}),
    )
    .await
    .assert_status(201);
    assert!(delivered_events(&app, &acme, &id).await.is_empty());

    seal(&app, acme.company.id).await;

    // The entity's, the key's, the webhook's and the role's entries.
    assert_eq!(
        delivered_events(&app, &acme, &id).await,
        vec![json!("audit.entry"); 4]
    );
}

async fn a_webhook_not_naming_audit_entry_gets_none(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let id = webhook(&app, &acme, &["ticket.created", "user.created"]).await;
    app.post(
        "/users",
        &acme.key,
        json!({"name": "Ada", "email": "ada@acme.test"}),
    )
    .await
    .assert_status(201);

    seal(&app, acme.company.id).await;

    assert_eq!(
        delivered_events(&app, &acme, &id).await,
        [json!("user.created")]
    );
}
