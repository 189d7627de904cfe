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
    a_user_created_is_recorded,
    a_role_change_of_a_user_is_recorded,
    a_deactivated_user_is_recorded,
    an_update_that_changes_nothing_is_not_recorded,
    a_team_created_changed_and_deleted_is_recorded,
    a_company_suspended_and_reactivated_is_recorded,
    a_deleted_ticket_is_recorded,
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

async fn a_user_created_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;

    let user = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Ada", "email": "ada@acme.test"}),
        )
        .await
        .assert_status(201)
        .clone();

    let entry = only_entry(&app, &acme, "user.created").await;
    assert_by_key_on(&entry, &actor, "user", user["id"].as_str().expect("id"));
    assert_eq!(entry["changes"]["after"]["email"], "ada@acme.test");
}

async fn a_role_change_of_a_user_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let user = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Ada", "email": "ada@acme.test"}),
        )
        .await
        .assert_status(201)
        .clone();
    let id = user["id"].as_str().expect("id");

    app.patch(
        &format!("/users/{id}"),
        &acme.key,
        json!({"roleName": "admin"}),
    )
    .await
    .assert_status(200);

    let entry = only_entry(&app, &acme, "user.updated").await;
    assert_by_key_on(&entry, &actor, "user", id);
    assert_eq!(entry["changes"]["before"]["roleName"], "agent");
    assert_eq!(entry["changes"]["after"]["roleName"], "admin");
}

async fn a_deactivated_user_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let user = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Ada", "email": "ada@acme.test"}),
        )
        .await
        .assert_status(201)
        .clone();
    let id = user["id"].as_str().expect("id");

    app.patch(
        &format!("/users/{id}"),
        &acme.key,
        json!({"isActive": false}),
    )
    .await
    .assert_status(200);

    let entry = only_entry(&app, &acme, "user.deactivated").await;
    assert_by_key_on(&entry, &actor, "user", id);
    assert_eq!(
        entry["changes"],
        json!({"before": {"isActive": true}, "after": {"isActive": false}})
    );
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

async fn a_team_created_changed_and_deleted_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let user = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Ada", "email": "ada@acme.test"}),
        )
        .await
        .assert_status(201)["id"]
        .clone();
    let team = app
        .post(
            "/teams",
            &acme.key,
            json!({"name": "Billing", "memberIds": [user]}),
        )
        .await
        .assert_status(201)
        .clone();
    let id = team["id"].as_str().expect("id");
    app.patch(
        &format!("/teams/{id}"),
        &acme.key,
        json!({"name": "Billing 2"}),
    )
    .await
    .assert_status(200);
    app.delete(&format!("/teams/{id}"), &acme.key)
        .await
        .assert_status(204);

    let created = only_entry(&app, &acme, "team.created").await;
    assert_by_key_on(&created, &actor, "team", id);
    assert_eq!(created["changes"]["after"]["name"], "Billing");
    let updated = only_entry(&app, &acme, "team.updated").await;
    assert_by_key_on(&updated, &actor, "team", id);
    assert_eq!(
        updated["changes"],
        json!({"before": {"name": "Billing"}, "after": {"name": "Billing 2"}})
    );
    let deleted = only_entry(&app, &acme, "team.deleted").await;
    assert_by_key_on(&deleted, &actor, "team", id);
}

/// The CLI suspends and reactivates (as `system`).
async fn a_company_suspended_and_reactivated_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let company = acme.company.id;
    for suspended in [true, false] {
        supportdesk::companies::store::set_suspended(
            &app.state.db,
            company,
            suspended,
            app.state.clock.now(),
        )
        .await
        .expect("status set");
    }

    let system = json!({"type": "system", "id": null, "name": "system"});
    let target = json!({"type": "company", "id": company});
    let suspended = only_entry(&app, &acme, "company.suspended").await;
    assert_eq!(
        (&suspended["actor"], &suspended["target"]),
        (&system, &target)
    );
    assert_eq!(
        suspended["changes"]["after"],
        json!({"status": "suspended"})
    );
    let reactivated = only_entry(&app, &acme, "company.reactivated").await;
    assert_eq!(
        (&reactivated["actor"], &reactivated["target"]),
        (&system, &target)
    );
    assert_eq!(reactivated["changes"]["after"], json!({"status": "active"}));
}

async fn a_deleted_ticket_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let body = json!({"entityId": acme.entity.id, "subject": "Refund", "priority": "LOW"});
    let ticket = app
        .post("/tickets", &acme.key, body)
        .await
        .assert_status(201)
        .clone();
    let id = ticket["id"].as_str().expect("id");

    app.delete(&format!("/tickets/{id}"), &acme.key)
        .await
        .assert_status(200);

    let entry = only_entry(&app, &acme, "ticket.deleted").await;
    assert_by_key_on(&entry, &actor, "ticket", id);
    assert_eq!(
        entry["changes"]["before"],
        json!({"ticketNumber": ticket["ticketNumber"], "subject": "Refund"})
    );
}
