//! Each recorded change through the API writes one entry naming the key
//! that made it and the record it changed, with what changed.

use serde_json::json;

use super::{assert_by_key_on, key_id, only_entry};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_minted_key_is_recorded,
    a_changed_key_is_recorded_with_before_and_after,
    a_revoked_key_is_recorded,
    a_custom_role_created_changed_and_deleted_is_recorded,
    a_webhook_created_changed_and_deleted_is_recorded,
    a_rotated_webhook_secret_is_recorded,
    a_settings_change_is_recorded,
    an_update_that_changes_nothing_is_not_recorded,
);

async fn a_minted_key_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let created = app
        .post(
            "/api-keys",
            &acme.key,
            json!({"name": "Zapier", "scopes": ["tickets:read"]}),
        )
        .await
        .assert_status(201)
        .clone();
    let id = created["id"].as_str().expect("id");

    let entries = super::entries_of(&app, &acme, "api_key.created").await;
    let entry = entries
        .iter()
        .find(|e| e["target"]["id"] == id)
        .expect("the new key's entry");
    assert_by_key_on(entry, &actor, "api_key", id);
    assert_eq!(entry["changes"]["after"]["name"], "Zapier");
    assert_eq!(entry["changes"]["secret"], "created");
}

async fn a_changed_key_is_recorded_with_before_and_after(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let created = app
        .post(
            "/api-keys",
            &acme.key,
            json!({"name": "Old", "scopes": ["tickets:read"]}),
        )
        .await
        .assert_status(201)
        .clone();
    let id = created["id"].as_str().expect("id");

    app.patch(
        &format!("/api-keys/{id}"),
        &acme.key,
        json!({"name": "New"}),
    )
    .await
    .assert_status(200);

    let entry = only_entry(&app, &acme, "api_key.updated").await;
    assert_by_key_on(&entry, &actor, "api_key", id);
    assert_eq!(
        entry["changes"],
        json!({"before": {"name": "Old"}, "after": {"name": "New"}})
    );
}

async fn a_revoked_key_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let created = app
        .post(
            "/api-keys",
            &acme.key,
            json!({"name": "Gone", "scopes": ["tickets:read"]}),
        )
        .await
        .assert_status(201)
        .clone();
    let id = created["id"].as_str().expect("id");

    app.delete(&format!("/api-keys/{id}"), &acme.key)
        .await
        .assert_status(204);

    let entry = only_entry(&app, &acme, "api_key.revoked").await;
    assert_by_key_on(&entry, &actor, "api_key", id);
    assert_eq!(entry["changes"]["before"]["name"], "Gone");
}

async fn a_custom_role_created_changed_and_deleted_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let role = app
        .post(
            "/roles",
            &acme.key,
            json!({"name": "Triage", "scopes": ["tickets:read"]}),
        )
        .await
        .assert_status(201)
        .clone();
    let id = role["id"].as_str().expect("id");
    app.patch(
        &format!("/roles/{id}"),
        &acme.key,
        json!({"name": "Triage 2"}),
    )
    .await
    .assert_status(200);
    app.delete(&format!("/roles/{id}"), &acme.key)
        .await
        .assert_status(204);

    let created = only_entry(&app, &acme, "role.created").await;
    assert_by_key_on(&created, &actor, "role", id);
    assert_eq!(created["changes"]["after"]["name"], "Triage");
    let updated = only_entry(&app, &acme, "role.updated").await;
    assert_by_key_on(&updated, &actor, "role", id);
    assert_eq!(
        updated["changes"],
        json!({"before": {"name": "Triage"}, "after": {"name": "Triage 2"}})
    );
    let deleted = only_entry(&app, &acme, "role.deleted").await;
    assert_by_key_on(&deleted, &actor, "role", id);
    assert_eq!(deleted["changes"]["before"]["name"], "Triage 2");
}

async fn a_webhook_created_changed_and_deleted_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let body =
        json!({"name": "SIEM", "url": "http://127.0.0.1:9/hook", "events": ["ticket.created"]});
    let hook = app
        .post("/company/webhooks", &acme.key, body)
        .await
        .assert_status(201)
        .clone();
    let id = hook["id"].as_str().expect("id");
    app.patch(
        &format!("/company/webhooks/{id}"),
        &acme.key,
        json!({"name": "SIEM 2"}),
    )
    .await
    .assert_status(200);
    app.delete(&format!("/company/webhooks/{id}"), &acme.key)
        .await
        .assert_status(200);

    let created = only_entry(&app, &acme, "webhook.created").await;
    assert_by_key_on(&created, &actor, "webhook", id);
    assert_eq!(
        created["changes"]["after"]["url"],
        "http://127.0.0.1:9/hook"
    );
    assert_eq!(created["changes"]["secret"], "created");
    let updated = only_entry(&app, &acme, "webhook.updated").await;
    assert_by_key_on(&updated, &actor, "webhook", id);
    assert_eq!(
        updated["changes"],
        json!({"before": {"name": "SIEM"}, "after": {"name": "SIEM 2"}})
    );
    let deleted = only_entry(&app, &acme, "webhook.deleted").await;
    assert_by_key_on(&deleted, &actor, "webhook", id);
}

async fn a_rotated_webhook_secret_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let body =
        json!({"name": "SIEM", "url": "http://127.0.0.1:9/hook", "events": ["ticket.created"]});
    let hook = app
        .post("/company/webhooks", &acme.key, body)
        .await
        .assert_status(201)
        .clone();
    let id = hook["id"].as_str().expect("id");

    app.post(
        &format!("/company/webhooks/{id}/rotate-secret"),
        &acme.key,
        json!({}),
    )
    .await
    .assert_status(200);

    let entry = only_entry(&app, &acme, "webhook.secret_rotated").await;
    assert_by_key_on(&entry, &actor, "webhook", id);
    assert_eq!(entry["changes"]["secret"], "rotated");
}

async fn a_settings_change_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;

    app.patch("/settings", &acme.key, json!({"timezone": "Europe/Paris"}))
        .await
        .assert_status(200);

    let entry = only_entry(&app, &acme, "settings.updated").await;
    assert_by_key_on(&entry, &actor, "settings", &acme.company.id.to_string());
    assert_eq!(entry["changes"]["after"]["timezone"], "Europe/Paris");
}

async fn an_update_that_changes_nothing_is_not_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let role = app
        .post(
            "/roles",
            &acme.key,
            json!({"name": "Same", "scopes": ["tickets:read"]}),
        )
        .await
        .assert_status(201)
        .clone();
    let id = role["id"].as_str().expect("id");

    app.patch(&format!("/roles/{id}"), &acme.key, json!({"name": "Same"}))
        .await
        .assert_status(200);

    assert!(
        super::entries_of(&app, &acme, "role.updated")
            .await
            .is_empty()
    );
}
