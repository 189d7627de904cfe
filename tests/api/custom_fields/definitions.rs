//! `/settings/custom-fields`: create, list, update, delete, and the
//! changes refused while values would be stranded.

use super::*;

backend_tests!(
    definitions_are_created_listed_and_updated,
    bad_definitions_are_400,
    a_duplicate_key_is_409,
    a_type_change_is_refused_while_values_exist,
    removing_an_option_in_use_is_refused,
    deleting_a_definition_removes_its_values,
    a_company_has_at_most_100_definitions
);

async fn definitions_are_created_listed_and_updated(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let created = define(
        &app,
        &acme,
        json!({"key": "plan", "label": "Plan", "type": "select", "appliesTo": ["chat", "ticket"],
               "options": ["basic", "pro"], "required": false, "visitorWritable": true}),
    )
    .await;
    assert_eq!(created["key"], "plan");
    assert_eq!(created["type"], "select");
    assert_eq!(created["appliesTo"], json!(["chat", "ticket"]));
    assert_eq!(created["options"], json!(["basic", "pro"]));
    assert_eq!(created["visitorWritable"], true);
    define(
        &app,
        &acme,
        json!({"key": "order_id", "label": "Order", "type": "text", "appliesTo": ["ticket"]}),
    )
    .await;
    let r = app.get("/settings/custom-fields", &acme.key).await;
    let keys: Vec<&str> = r.assert_status(200)["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|d| d["key"].as_str().expect("key"))
        .collect();
    assert_eq!(keys, ["order_id", "plan"]);

    let r = app
        .patch(
            "/settings/custom-fields/plan",
            &acme.key,
            json!({"label": "Plan name", "options": ["basic", "pro", "gold"], "required": true}),
        )
        .await;
    let updated = r.assert_status(200);
    assert_eq!(updated["label"], "Plan name");
    assert_eq!(updated["options"], json!(["basic", "pro", "gold"]));
    assert_eq!(updated["required"], true);
    assert_eq!(updated["visitorWritable"], true);
    let r = app
        .patch(
            "/settings/custom-fields/plan",
            &acme.key,
            json!({"key": "other"}),
        )
        .await;
    r.assert_error(400, "validation_failed");
    let r = app
        .patch(
            "/settings/custom-fields/nope",
            &acme.key,
            json!({"label": "x"}),
        )
        .await;
    r.assert_error(404, "not_found");
}

async fn bad_definitions_are_400(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let cases = [
        (
            json!({"key": "Plan", "label": "P", "type": "text", "appliesTo": ["ticket"]}),
            "key",
        ),
        (
            json!({"key": "p", "label": "P", "type": "colour", "appliesTo": ["ticket"]}),
            "type",
        ),
        (
            json!({"key": "p", "label": "P", "type": "text", "appliesTo": []}),
            "appliesTo",
        ),
        (
            json!({"key": "p", "label": "P", "type": "text", "appliesTo": ["mail"]}),
            "appliesTo",
        ),
        (
            json!({"key": "p", "label": "P", "type": "select", "appliesTo": ["ticket"]}),
            "options",
        ),
        (
            json!({"key": "p", "label": "P", "type": "select", "appliesTo": ["ticket"],
                   "options": ["a", "a"]}),
            "options",
        ),
        (
            json!({"key": "p", "label": "P", "type": "number", "appliesTo": ["ticket"],
                   "options": ["a"]}),
            "options",
        ),
        (
            json!({"key": "p", "type": "text", "appliesTo": ["ticket"]}),
            "label",
        ),
    ];
    for (body, field) in cases {
        let r = app.post("/settings/custom-fields", &acme.key, body).await;
        assert_invalid(&r, &[field]);
    }
    let r = app.get("/settings/custom-fields", &acme.key).await;
    assert_eq!(r.assert_status(200)["data"], json!([]));
}

async fn a_duplicate_key_is_409(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let body = json!({"key": "plan", "label": "Plan", "type": "text", "appliesTo": ["ticket"]});
    define(&app, &acme, body.clone()).await;
    let r = app.post("/settings/custom-fields", &acme.key, body).await;
    r.assert_error(409, "conflict");
}

async fn a_type_change_is_refused_while_values_exist(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    define(
        &app,
        &acme,
        json!({"key": "order_id", "label": "Order", "type": "text", "appliesTo": ["ticket"]}),
    )
    .await;
    // No values yet: the type may change, and back.
    let path = "/settings/custom-fields/order_id";
    let r = app.patch(path, &acme.key, json!({"type": "number"})).await;
    assert_eq!(r.assert_status(200)["type"], "number");
    let r = app.patch(path, &acme.key, json!({"type": "text"})).await;
    r.assert_status(200);
    create_ticket(&app, &acme, json!({"customFields": {"order_id": "A-1"}}))
        .await
        .assert_status(201);
    let r = app.patch(path, &acme.key, json!({"type": "number"})).await;
    r.assert_error(409, "conflict");
    let r = app.get("/settings/custom-fields", &acme.key).await;
    assert_eq!(r.assert_status(200)["data"][0]["type"], "text");
}

async fn removing_an_option_in_use_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    define(
        &app,
        &acme,
        json!({"key": "plan", "label": "Plan", "type": "select", "appliesTo": ["ticket"],
               "options": ["basic", "pro", "gold"]}),
    )
    .await;
    create_ticket(&app, &acme, json!({"customFields": {"plan": "pro"}}))
        .await
        .assert_status(201);
    let path = "/settings/custom-fields/plan";
    let r = app
        .patch(path, &acme.key, json!({"options": ["basic", "gold"]}))
        .await;
    r.assert_error(409, "conflict");
    // An option nobody holds may go.
    let r = app
        .patch(path, &acme.key, json!({"options": ["basic", "pro"]}))
        .await;
    assert_eq!(r.assert_status(200)["options"], json!(["basic", "pro"]));
}

async fn deleting_a_definition_removes_its_values(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    define_ticket_fields(&app, &acme).await;
    let r = create_ticket(
        &app,
        &acme,
        json!({"customFields": {"plan": "pro", "order_id": "A-1"}}),
    )
    .await;
    let id = id_of(r.assert_status(201));
    let r = app.delete("/settings/custom-fields/plan", &acme.key).await;
    assert_eq!(r.assert_status(200)["deleted"], true);
    let r = app.get(&format!("/tickets/{id}"), &acme.key).await;
    assert_eq!(
        r.assert_status(200)["customFields"],
        json!({"order_id": "A-1"})
    );
    // A new field under the old key starts empty: no value was left behind.
    define(
        &app,
        &acme,
        json!({"key": "plan", "label": "Plan", "type": "text", "appliesTo": ["ticket"]}),
    )
    .await;
    let r = app.get("/tickets?cf.plan=pro", &acme.key).await;
    assert_eq!(r.assert_status(200)["total"], 0);
    let r = app.delete("/settings/custom-fields/plan", &acme.key).await;
    r.assert_status(200);
    let r = app.delete("/settings/custom-fields/plan", &acme.key).await;
    r.assert_error(404, "not_found");
}

async fn a_company_has_at_most_100_definitions(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    for i in 0..100 {
        define(
            &app,
            &acme,
            json!({"key": format!("f{i}"), "label": "F", "type": "text", "appliesTo": ["ticket"]}),
        )
        .await;
    }
    let r = app
        .post(
            "/settings/custom-fields",
            &acme.key,
            json!({"key": "f100", "label": "F", "type": "text", "appliesTo": ["ticket"]}),
        )
        .await;
    assert_invalid(&r, &["key"]);
    let r = app.get("/settings/custom-fields", &acme.key).await;
    assert_eq!(
        r.assert_status(200)["data"].as_array().map(Vec::len),
        Some(100)
    );
}
