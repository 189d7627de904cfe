//! Each configuration change through the API writes one entry naming the
//! key that made it and what it changed: SSO, SLA policies, business hours,
//! escalation rules, custom-field definitions, entities, the widget's
//! identity secret and automations.

use serde_json::{Value, json};

use super::{assert_by_key_on, key_id, only_entry};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    an_sso_configuration_change_is_recorded_without_its_secret,
    replaced_sla_policies_are_recorded,
    business_hours_created_changed_and_deleted_are_recorded,
    replaced_escalation_rules_are_recorded,
    a_custom_field_created_changed_and_deleted_is_recorded,
    an_entity_created_and_changed_is_recorded,
    a_rotated_widget_secret_is_recorded_without_it,
    an_automation_created_changed_and_deleted_is_recorded,
);

/// The id in an answer.
fn id_of(record: &Value) -> String {
    record["id"].as_str().expect("id").to_owned()
}

async fn an_sso_configuration_change_is_recorded_without_its_secret(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let body = json!({"slug": "acme", "issuerUrl": "http://127.0.0.1:9/oidc",
        "clientId": "desk", "clientSecret": "s3cr3t-client"});

    app.put("/settings/sso", &acme.key, body)
        .await
        .assert_status(200);

    let entry = only_entry(&app, &acme, "sso.updated").await;
    assert_by_key_on(&entry, &actor, "sso", &acme.company.id.to_string());
    assert_eq!(
        (
            &entry["changes"]["after"]["clientId"],
            &entry["changes"]["secret"]
        ),
        (&json!("desk"), &json!("created"))
    );
    assert!(!entry.to_string().contains("s3cr3t-client"), "{entry}");
}

async fn replaced_sla_policies_are_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;

    crate::actors::fast_policy(&app, &acme).await;

    let entry = only_entry(&app, &acme, "sla_policies.replaced").await;
    assert_by_key_on(&entry, &actor, "sla_policies", &acme.company.id.to_string());
    assert_eq!(entry["changes"]["before"]["policies"], json!([]));
    assert_eq!(entry["changes"]["after"]["policies"][0]["name"], "Fast");
}

async fn business_hours_created_changed_and_deleted_are_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let weekly = json!([{"day": "mon", "open": "09:00", "close": "17:00"}]);
    let body = json!({"name": "Office", "timezone": "UTC", "weekly": weekly});
    let created = app
        .post("/settings/business-hours", &acme.key, body)
        .await
        .assert_status(201)
        .clone();
    let id = id_of(&created);
    let path = format!("/settings/business-hours/{id}");
    app.patch(&path, &acme.key, json!({"name": "Desk"}))
        .await
        .assert_status(200);
    app.delete(&path, &acme.key).await.assert_status(200);

    for action in ["created", "updated", "deleted"] {
        let entry = only_entry(&app, &acme, &format!("business_hours.{action}")).await;
        assert_by_key_on(&entry, &actor, "business_hours", &id);
    }
    let updated = only_entry(&app, &acme, "business_hours.updated").await;
    assert_eq!(
        updated["changes"],
        json!({"before": {"name": "Office"}, "after": {"name": "Desk"}})
    );
}

async fn replaced_escalation_rules_are_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let bob = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Bob", "email": "bob@acme.test"}),
        )
        .await
        .assert_status(201)["id"]
        .clone();
    let rules = json!({"rules": [{"name": "Old high", "conditions": {"priorities": ["HIGH"]},
        "action": {"escalateToId": bob}}]});

    app.put("/settings/escalation-rules", &acme.key, rules)
        .await
        .assert_status(200);

    let entry = only_entry(&app, &acme, "escalation_rules.replaced").await;
    let company = acme.company.id.to_string();
    assert_by_key_on(&entry, &actor, "escalation_rules", &company);
    assert_eq!(entry["changes"]["after"]["rules"][0]["name"], "Old high");
}

async fn a_custom_field_created_changed_and_deleted_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let body = json!({"key": "plan", "label": "Plan", "type": "text", "appliesTo": ["ticket"]});
    app.post("/settings/custom-fields", &acme.key, body)
        .await
        .assert_status(201);
    let changed = json!({"label": "Plan name"});
    app.patch("/settings/custom-fields/plan", &acme.key, changed)
        .await
        .assert_status(200);
    app.delete("/settings/custom-fields/plan", &acme.key)
        .await
        .assert_status(200);

    for action in ["created", "updated", "deleted"] {
        let entry = only_entry(&app, &acme, &format!("custom_field.{action}")).await;
        assert_eq!(entry["actor"]["id"], actor.as_str(), "{entry}");
        assert_eq!(
            (&entry["target"], &entry["changes"]["key"]),
            (&json!({"type": "custom_field", "id": null}), &json!("plan")),
            "{entry}"
        );
    }
}

async fn an_entity_created_and_changed_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let created = app
        .post("/entities", &acme.key, json!({"name": "Shop"}))
        .await
        .assert_status(201)
        .clone();
    let id = id_of(&created);
    app.patch(
        &format!("/entities/{id}"),
        &acme.key,
        json!({"name": "Store"}),
    )
    .await
    .assert_status(200);

    // The company's first entity was made by the service, this one by the key.
    let made = super::entries_of(&app, &acme, "entity.created").await;
    let made = made
        .iter()
        .find(|entry| entry["target"]["id"] == id.as_str())
        .expect("the new entity's entry");
    assert_by_key_on(made, &actor, "entity", &id);
    assert_eq!(made["changes"]["after"]["name"], "Shop");
    let changed = only_entry(&app, &acme, "entity.updated").await;
    assert_by_key_on(&changed, &actor, "entity", &id);
    assert_eq!(
        changed["changes"],
        json!({"before": {"name": "Shop"}, "after": {"name": "Store"}})
    );
}

async fn a_rotated_widget_secret_is_recorded_without_it(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let entity = acme.entity.id.to_string();

    let rotated = app
        .post(
            &format!("/entities/{entity}/widget-secret/rotate"),
            &acme.key,
            json!({}),
        )
        .await
        .assert_status(200)
        .clone();

    let entry = only_entry(&app, &acme, "widget.secret_rotated").await;
    assert_by_key_on(&entry, &actor, "entity", &entity);
    assert_eq!(entry["changes"]["secret"], "created");
    let secret = rotated["secret"].as_str().expect("secret");
    assert!(!entry.to_string().contains(secret), "{entry}");
}

async fn an_automation_created_changed_and_deleted_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let body = json!({"name": "Tag VIP", "kind": "trigger", "events": ["ticket.created"],
        "actions": [{"type": "add_tags", "value": ["vip"]}]});
    let created = app
        .post("/automations", &acme.key, body)
        .await
        .assert_status(201)
        .clone();
    let id = id_of(&created);
    let path = format!("/automations/{id}");
    app.patch(&path, &acme.key, json!({"enabled": false}))
        .await
        .assert_status(200);
    app.delete(&path, &acme.key).await.assert_status(200);

    for action in ["created", "updated", "deleted"] {
        let entry = only_entry(&app, &acme, &format!("automation.{action}")).await;
        assert_by_key_on(&entry, &actor, "automation", &id);
    }
    let updated = only_entry(&app, &acme, "automation.updated").await;
    assert_eq!(
        updated["changes"],
        json!({"before": {"enabled": true}, "after": {"enabled": false}})
    );
}
