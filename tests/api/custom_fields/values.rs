//! Values on tickets: each type's validation and normal form, required
//! fields, PATCH merging and clearing, and what a change announces.

use super::*;

backend_tests!(
    each_type_accepts_its_values_in_normal_form,
    each_type_refuses_other_values,
    required_fields_must_be_given_and_stay,
    a_patch_merges_values_and_null_clears_one,
    value_changes_reach_the_event_and_the_timeline
);

async fn each_type_accepts_its_values_in_normal_form(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    define_ticket_fields(&app, &acme).await;
    let given = json!({
        "order_id": "A-123", "order_total": 99.5, "churned": false, "renewal": "2026-12-31",
        "last_seen": "2026-11-24T03:04:05.6789+02:00", "plan": "pro",
        "features": ["sso", "api", "sso"],
    });
    let r = create_ticket(&app, &acme, json!({ "customFields": given })).await;
    let stored = json!({
        "churned": false, "features": ["api", "sso"], "last_seen": "2026-11-24T01:04:05.678Z",
        "order_id": "A-123", "order_total": 99.5, "plan": "pro", "renewal": "2026-12-31",
    });
    let ticket = r.assert_status(201);
    assert_eq!(ticket["customFields"], stored);
    let r = app
        .get(&format!("/tickets/{}", id_of(ticket)), &acme.key)
        .await;
    assert_eq!(r.assert_status(200)["customFields"], stored);
    // Without values the object is empty, on every ticket.
    let r = create_ticket(&app, &acme, json!({})).await;
    assert_eq!(r.assert_status(201)["customFields"], json!({}));
}

async fn each_type_refuses_other_values(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    define_ticket_fields(&app, &acme).await;
    let cases = [
        ("order_id", json!("x".repeat(1_001))),
        ("order_id", json!(12)),
        ("order_total", json!("12")),
        ("churned", json!("yes")),
        ("renewal", json!("31/12/2026")),
        ("renewal", json!("2026-02-30")),
        ("last_seen", json!("2026-11-24 03:04")),
        ("plan", json!("gold")),
        ("features", json!("api")),
        ("features", json!(["api", "fax"])),
        ("unknown", json!("x")),
    ];
    for (key, value) in cases {
        let r = create_ticket(&app, &acme, json!({ "customFields": { key: value } })).await;
        assert_invalid(&r, &[&format!("customFields.{key}")]);
    }
    let r = create_ticket(&app, &acme, json!({"customFields": ["plan"]})).await;
    assert_invalid(&r, &["customFields"]);
    let r = app.get("/tickets", &acme.key).await;
    assert_eq!(r.assert_status(200)["total"], 0, "nothing was created");
}

async fn required_fields_must_be_given_and_stay(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    define_ticket_fields(&app, &acme).await;
    app.patch(
        "/settings/custom-fields/plan",
        &acme.key,
        json!({"required": true}),
    )
    .await
    .assert_status(200);
    let r = create_ticket(&app, &acme, json!({"customFields": {"order_id": "A-1"}})).await;
    assert_invalid(&r, &["customFields.plan"]);
    let r = create_ticket(&app, &acme, json!({"customFields": {"plan": null}})).await;
    assert_invalid(&r, &["customFields.plan"]);
    let r = create_ticket(&app, &acme, json!({"customFields": {"plan": "basic"}})).await;
    let id = id_of(r.assert_status(201));
    let path = format!("/tickets/{id}");
    let r = app
        .patch(&path, &acme.key, json!({"customFields": {"plan": null}}))
        .await;
    assert_invalid(&r, &["customFields.plan"]);
    let r = app
        .patch(&path, &acme.key, json!({"customFields": {"plan": "pro"}}))
        .await;
    assert_eq!(r.assert_status(200)["customFields"]["plan"], "pro");
}

async fn a_patch_merges_values_and_null_clears_one(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    define_ticket_fields(&app, &acme).await;
    let r = create_ticket(
        &app,
        &acme,
        json!({"customFields": {"order_id": "A-1", "plan": "basic"}}),
    )
    .await;
    let path = format!("/tickets/{}", id_of(r.assert_status(201)));
    let r = app
        .patch(
            &path,
            &acme.key,
            json!({"customFields": {"plan": "pro", "order_total": 10}}),
        )
        .await;
    assert_eq!(
        r.assert_status(200)["customFields"],
        json!({"order_id": "A-1", "order_total": 10, "plan": "pro"})
    );
    let r = app
        .patch(
            &path,
            &acme.key,
            json!({"customFields": {"order_id": null}}),
        )
        .await;
    assert_eq!(
        r.assert_status(200)["customFields"],
        json!({"order_total": 10, "plan": "pro"})
    );
    // A bad value in a PATCH changes nothing, not even the good ones.
    let r = app
        .patch(
            &path,
            &acme.key,
            json!({"customFields": {"plan": "basic", "order_total": "ten"}}),
        )
        .await;
    assert_invalid(&r, &["customFields.order_total"]);
    let r = app.get(&path, &acme.key).await;
    assert_eq!(r.assert_status(200)["customFields"]["plan"], "pro");
}

async fn value_changes_reach_the_event_and_the_timeline(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    define_ticket_fields(&app, &acme).await;
    let r = create_ticket(&app, &acme, json!({"customFields": {"plan": "basic"}})).await;
    let id = id_of(r.assert_status(201));
    let path = format!("/tickets/{id}");
    app.patch(
        &path,
        &acme.key,
        json!({"customFields": {"plan": "pro", "order_id": "A-9"}}),
    )
    .await
    .assert_status(200);
    // Repeating the values changes nothing and announces nothing.
    app.patch(
        &path,
        &acme.key,
        json!({"customFields": {"plan": "pro", "order_id": "A-9"}}),
    )
    .await
    .assert_status(200);
    app.patch(&path, &acme.key, json!({"customFields": {"plan": null}}))
        .await
        .assert_status(200);

    let events = updated_events(&app, acme.company.id).await;
    let changes: Vec<&Value> = events
        .iter()
        .map(|e| &e["changes"]["customFields"])
        .collect();
    assert_eq!(
        changes,
        [
            &json!({"order_id": {"from": null, "to": "A-9"}, "plan": {"from": "basic", "to": "pro"}}),
            &json!({"plan": {"from": "pro", "to": null}}),
        ]
    );
    assert_eq!(events[1]["customFields"], json!({"order_id": "A-9"}));

    let r = app.get(&format!("{path}/activities"), &acme.key).await;
    let entries: Vec<&Value> = r.assert_status(200)["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter(|a| a["type"] == "custom_fields_changed")
        .map(|a| &a["details"])
        .collect();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[1], &json!({"plan": {"from": "pro", "to": null}}));
}
