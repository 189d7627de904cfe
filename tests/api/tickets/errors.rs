//! 404 for ids outside the tenant, 400 with details for bad input.

use super::*;

backend_tests!(
    foreign_unknown_and_malformed_ids_are_404,
    invalid_input_is_400_with_field_details,
);

async fn foreign_unknown_and_malformed_ids_are_404(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let globex = app.company().await;
    let ann = user(&app, acme.company.id, "Ann").await;
    let gina = user(&app, globex.company.id, "Gina").await;
    let t = ticket(&app, &acme, json!({"subject": "Mine"})).await;
    let id = id_of(&t);
    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;

    // (caller's key, a user of the caller's company, the ticket id to try)
    let cases = [
        (globex.key.clone(), gina.id, id.clone()),
        (live.clone(), ann.id, id.clone()),
        (acme.key.clone(), ann.id, Uuid::now_v7().to_string()),
        (acme.key.clone(), ann.id, "not-a-ticket".to_string()),
        (acme.key.clone(), ann.id, "1234".to_string()),
    ];
    for (key, agent, target) in &cases {
        let path = format!("/tickets/{target}");
        app.get(&path, key).await.assert_error(404, "not_found");
        app.patch(&path, key, json!({"priority": "HIGH"}))
            .await
            .assert_error(404, "not_found");
        app.post(
            &format!("{path}/escalate"),
            key,
            json!({"escalateToId": agent}),
        )
        .await
        .assert_error(404, "not_found");
        app.post(&format!("{path}/comments"), key, json!({"body": "hi"}))
            .await
            .assert_error(404, "not_found");
        app.get(&format!("{path}/comments"), key)
            .await
            .assert_error(404, "not_found");
        app.get(&format!("{path}/activities"), key)
            .await
            .assert_error(404, "not_found");
        app.delete(&path, key).await.assert_error(404, "not_found");
    }

    // Nobody else sees it in a list, and it is untouched.
    for key in [&globex.key, &live] {
        let r = app.get("/tickets", key).await;
        assert_eq!(r.assert_status(200)["total"], 0);
    }
    let r = app.get(&format!("/tickets/{id}"), &acme.key).await;
    let now = r.assert_status(200);
    assert_eq!(now["priority"], "MEDIUM");
    assert_eq!(now["assignedTo"], Value::Null);
    assert_eq!(activity_types(&app, &acme.key, &id).await, ["created"]);
}

/// Asserts a 400 `validation_failed` whose details name `fields`.
#[track_caller]
fn assert_invalid(r: &TestResponse, fields: &[&str]) {
    r.assert_error(400, "validation_failed");
    let named: Vec<&str> = r.body["details"]
        .as_array()
        .expect("details")
        .iter()
        .map(|d| d["field"].as_str().expect("field"))
        .collect();
    for field in fields {
        assert!(named.contains(field), "{field} in {}", r.text);
    }
    for detail in r.body["details"].as_array().expect("details") {
        assert!(detail["message"].is_string(), "{}", r.text);
    }
}

async fn invalid_input_is_400_with_field_details(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let globex = app.company().await;
    let gina = user(&app, globex.company.id, "Gina").await;
    let key = acme.key.as_str();
    let entity = acme.entity.id;

    // Create.
    let cases: Vec<(Value, &str)> = vec![
        (json!({"entityId": entity}), "subject"),
        (json!({"subject": "   ", "entityId": entity}), "subject"),
        (
            json!({"subject": "x".repeat(256), "entityId": entity}),
            "subject",
        ),
        (json!({"subject": 42, "entityId": entity}), "subject"),
        (json!({"subject": "Hi"}), "entityId"),
        (json!({"subject": "Hi", "entityId": "nope"}), "entityId"),
        (
            json!({"subject": "Hi", "entityId": globex.entity.id}),
            "entityId",
        ),
        (
            json!({"subject": "Hi", "entityId": Uuid::now_v7()}),
            "entityId",
        ),
        (
            json!({"subject": "Hi", "entityId": entity, "priority": "high"}),
            "priority",
        ),
        (
            json!({"subject": "Hi", "entityId": entity, "description": "d".repeat(50_001)}),
            "description",
        ),
        (
            json!({"subject": "Hi", "entityId": entity, "visitorEmail": "not-an-email"}),
            "visitorEmail",
        ),
    ];
    for (body, field) in cases {
        let r = app.post("/tickets", key, body).await;
        assert_invalid(&r, &[field]);
    }
    let r = app
        .post(
            "/tickets",
            key,
            json!({"priority": "SOON", "visitorEmail": "@", "description": "d".repeat(50_001)}),
        )
        .await;
    assert_invalid(
        &r,
        &[
            "subject",
            "entityId",
            "priority",
            "visitorEmail",
            "description",
        ],
    );
    // A description of exactly the maximum is fine.
    ticket(
        &app,
        &acme,
        json!({"subject": "Long", "description": "d".repeat(50_000)}),
    )
    .await;
    let r = app.get("/tickets", key).await;
    assert_eq!(
        r.assert_status(200)["total"],
        1,
        "nothing invalid was created"
    );

    // Update.
    let t = ticket(&app, &acme, json!({"subject": "Target"})).await;
    let path = format!("/tickets/{}", id_of(&t));
    let cases: Vec<(Value, &str)> = vec![
        (json!({}), "body"),
        (json!({"status": "DONE"}), "status"),
        (json!({"status": "open"}), "status"),
        (json!({"status": null}), "status"),
        (json!({"priority": null}), "priority"),
        (json!({"priority": "CRITICAL"}), "priority"),
        (json!({"assignedToId": "x"}), "assignedToId"),
        (json!({"assignedToId": gina.id}), "assignedToId"),
        (json!({"assignedToId": Uuid::now_v7()}), "assignedToId"),
        (json!({"subject": "Renamed"}), "subject"),
    ];
    for (body, field) in cases {
        let r = app.patch(&path, key, body).await;
        assert_invalid(&r, &[field]);
    }
    // Validation comes before the lookup: a bad body on an unknown ticket is 400.
    let r = app
        .patch(&format!("/tickets/{}", Uuid::now_v7()), key, json!({}))
        .await;
    assert_invalid(&r, &["body"]);

    // Escalate.
    let escalate = format!("{path}/escalate");
    let cases: Vec<(Value, &str)> = vec![
        (json!({}), "escalateToId"),
        (json!({"escalateToId": "x"}), "escalateToId"),
        (json!({"escalateToId": gina.id}), "escalateToId"),
        (
            json!({"escalateToId": gina.id, "reason": "r".repeat(1001)}),
            "reason",
        ),
    ];
    for (body, field) in cases {
        let r = app.post(&escalate, key, body).await;
        assert_invalid(&r, &[field]);
    }

    // Comments.
    let comments = format!("{path}/comments");
    let cases: Vec<(Value, &str)> = vec![
        (json!({}), "body"),
        (json!({"body": "  "}), "body"),
        (json!({"body": "b".repeat(50_001)}), "body"),
        (json!({"body": "hi", "authorId": "x"}), "authorId"),
        (json!({"body": "hi", "authorId": gina.id}), "authorId"),
        (json!({"body": "hi", "isInternal": "yes"}), "isInternal"),
    ];
    for (body, field) in cases {
        let r = app.post(&comments, key, body).await;
        assert_invalid(&r, &[field]);
    }

    // Nothing above changed the ticket.
    let r = app.get(&path, key).await;
    let unchanged = r.assert_status(200);
    assert_eq!(unchanged, &t);
    assert_eq!(activity_types(&app, key, &id_of(&t)).await, ["created"]);

    // List parameters.
    for (query, field) in [
        ("status=open", "status"),
        ("priority=x", "priority"),
        ("entityId=x", "entityId"),
        ("assignedToId=x", "assignedToId"),
        ("limit=0", "limit"),
        ("limit=ten", "limit"),
        ("offset=-1", "offset"),
    ] {
        let r = app.get(&format!("/tickets?{query}"), key).await;
        assert_invalid(&r, &[field]);
    }
    let r = app.get("/tickets?status=DONE&limit=0", key).await;
    assert_invalid(&r, &["status", "limit"]);
    let r = app.get(&format!("{comments}?limit=0"), key).await;
    assert_invalid(&r, &["limit"]);
}
