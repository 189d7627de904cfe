//! 404 for ids outside the tenant, 400 with details for bad input.

use super::*;

backend_tests!(
    foreign_unknown_and_malformed_ids_are_404,
    invalid_creates_are_400_and_create_nothing,
    invalid_updates_are_400,
    an_invalid_update_of_an_unknown_ticket_is_400,
    invalid_escalations_are_400,
    invalid_comments_are_400,
    refused_writes_leave_the_ticket_unchanged,
    invalid_list_parameters_are_400,
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

/// An app, the caller's company, a user of another company (Gina), and a
/// ticket "Target" of the caller's with its path.
struct Target {
    app: TestApp,
    acme: TestCompany,
    gina: Uuid,
    ticket: Value,
    path: String,
}

async fn target(backend: Backend) -> Target {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let globex = app.company().await;
    let gina = user(&app, globex.company.id, "Gina").await.id;
    let ticket = ticket(&app, &acme, json!({"subject": "Target"})).await;
    let path = format!("/tickets/{}", id_of(&ticket));
    Target {
        app,
        acme,
        gina,
        ticket,
        path,
    }
}

async fn invalid_creates_are_400_and_create_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let globex = app.company().await;
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
}

async fn refuse_updates(app: &TestApp, key: &str, path: &str, gina: Uuid) {
    let cases: Vec<(Value, &str)> = vec![
        (json!({}), "body"),
        (json!({"status": "DONE"}), "status"),
        (json!({"status": "open"}), "status"),
        (json!({"status": null}), "status"),
        (json!({"priority": null}), "priority"),
        (json!({"priority": "CRITICAL"}), "priority"),
        (json!({"assignedToId": "x"}), "assignedToId"),
        (json!({"assignedToId": gina}), "assignedToId"),
        (json!({"assignedToId": Uuid::now_v7()}), "assignedToId"),
        (json!({"subject": "Renamed"}), "subject"),
    ];
    for (body, field) in cases {
        let r = app.patch(path, key, body).await;
        assert_invalid(&r, &[field]);
    }
    // Validation comes before the lookup: a bad body on an unknown ticket is 400.
    let r = app
        .patch(&format!("/tickets/{}", Uuid::now_v7()), key, json!({}))
        .await;
    assert_invalid(&r, &["body"]);
}

async fn invalid_updates_are_400(backend: Backend) {
    let t = target(backend).await;
    refuse_updates(&t.app, &t.acme.key, &t.path, t.gina).await;
}

async fn an_invalid_update_of_an_unknown_ticket_is_400(backend: Backend) {
    let t = target(backend).await;
    // Validation comes before the lookup.
    let r = t
        .app
        .patch(
            &format!("/tickets/{}", Uuid::now_v7()),
            &t.acme.key,
            json!({}),
        )
        .await;
    assert_invalid(&r, &["body"]);
}

async fn refuse_escalations(app: &TestApp, key: &str, path: &str, gina: Uuid) {
    let escalate = format!("{path}/escalate");
    let cases: Vec<(Value, &str)> = vec![
        (json!({}), "escalateToId"),
        (json!({"escalateToId": "x"}), "escalateToId"),
        (json!({"escalateToId": gina}), "escalateToId"),
        (
            json!({"escalateToId": gina, "reason": "r".repeat(1001)}),
            "reason",
        ),
    ];
    for (body, field) in cases {
        let r = app.post(&escalate, key, body).await;
        assert_invalid(&r, &[field]);
    }
}

async fn invalid_escalations_are_400(backend: Backend) {
    let t = target(backend).await;
    refuse_escalations(&t.app, &t.acme.key, &t.path, t.gina).await;
}

async fn refuse_comments(app: &TestApp, key: &str, path: &str, gina: Uuid) {
    let comments = format!("{path}/comments");
    let cases: Vec<(Value, &str)> = vec![
        (json!({}), "body"),
        (json!({"body": "  "}), "body"),
        (json!({"body": "b".repeat(50_001)}), "body"),
        (json!({"body": "hi", "authorId": "x"}), "authorId"),
        (json!({"body": "hi", "authorId": gina}), "authorId"),
        (json!({"body": "hi", "isInternal": "yes"}), "isInternal"),
    ];
    for (body, field) in cases {
        let r = app.post(&comments, key, body).await;
        assert_invalid(&r, &[field]);
    }
}

async fn invalid_comments_are_400(backend: Backend) {
    let t = target(backend).await;
    refuse_comments(&t.app, &t.acme.key, &t.path, t.gina).await;
}

async fn refused_writes_leave_the_ticket_unchanged(backend: Backend) {
    let t = target(backend).await;
    let (app, key, path) = (&t.app, t.acme.key.as_str(), t.path.as_str());
    refuse_updates(app, key, path, t.gina).await;
    refuse_escalations(app, key, path, t.gina).await;
    refuse_comments(app, key, path, t.gina).await;
    let r = app.get(path, key).await;
    let unchanged = r.assert_status(200);
    assert_eq!(unchanged, &t.ticket);
    assert_eq!(
        activity_types(app, key, &id_of(&t.ticket)).await,
        ["created"]
    );
}

async fn invalid_list_parameters_are_400(backend: Backend) {
    let t = target(backend).await;
    let (app, key) = (&t.app, t.acme.key.as_str());
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
    let r = app.get(&format!("{}/comments?limit=0", t.path), key).await;
    assert_invalid(&r, &["limit"]);
}
