//! Create, read, update, escalate, delete; comments.

use super::*;

backend_tests!(
    creates_with_defaults_and_reads_back,
    a_tagged_ticket_is_answered_as_it_reads_back,
    patches_each_field,
    escalates_to_another_agent,
    comments_are_added_and_listed,
    deletes_tickets,
);

async fn creates_with_defaults_and_reads_back(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;

    let r = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": "  Cannot log in  ", "entityId": acme.entity.id}),
        )
        .await;
    let created = r.assert_status(201).clone();
    assert_eq!(created["ticketNumber"], "TKT-000001");
    assert_eq!(created["subject"], "Cannot log in", "trimmed");
    assert_eq!(created["status"], "OPEN");
    assert_eq!(created["priority"], "MEDIUM");
    assert_eq!(created["entityId"], json!(acme.entity.id));
    assert_eq!(created["description"], Value::Null);
    assert_eq!(created["visitorEmail"], Value::Null);
    assert_eq!(created["assignedTo"], Value::Null);
    assert!(is_timestamp(&created["createdAt"]), "{created}");
    assert!(is_timestamp(&created["updatedAt"]), "{created}");
    Uuid::parse_str(created["id"].as_str().expect("id")).expect("uuid id");

    let full = ticket(
        &app,
        &acme,
        json!({"subject": "Refund", "description": "Charged twice", "priority": "HIGH",
               "visitorEmail": "ann@example.com"}),
    )
    .await;
    assert_eq!(full["ticketNumber"], "TKT-000002");
    assert_eq!(full["priority"], "HIGH");
    assert_eq!(full["status"], "OPEN");
    assert_eq!(full["description"], "Charged twice");
    assert_eq!(full["visitorEmail"], "ann@example.com");

    let read = app
        .get(&format!("/tickets/{}", id_of(&full)), &acme.key)
        .await;
    assert_eq!(read.assert_status(200), &full);

    // The LIVE mode of the same company has its own sequence.
    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    let r = app
        .post(
            "/tickets",
            &live,
            json!({"subject": "Live one", "entityId": acme.entity.id}),
        )
        .await;
    assert_eq!(r.assert_status(201)["ticketNumber"], "TKT-000001");
}

/// A create that writes the row and its tags answers without reading the
/// ticket back: the answer must be what a read shows.
async fn a_tagged_ticket_is_answered_as_it_reads_back(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let created = ticket(
        &app,
        &acme,
        json!({"subject": "Refund", "description": "Charged twice", "priority": "URGENT",
               "visitorEmail": "ann@example.com", "tags": ["vip", "billing", "Billing"]}),
    )
    .await;
    let read = app
        .get(&format!("/tickets/{}", id_of(&created)), &acme.key)
        .await;
    assert_eq!(read.assert_status(200), &created);
}

async fn patches_each_field(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = user(&app, acme.company.id, "Ann").await;
    let t = ticket(&app, &acme, json!({"subject": "Printer"})).await;
    let path = format!("/tickets/{}", id_of(&t));

    let r = app
        .patch(&path, &acme.key, json!({"status": "IN_PROGRESS"}))
        .await;
    let body = r.assert_status(200);
    assert_eq!(body["id"], t["id"]);
    assert_eq!(body["ticketNumber"], t["ticketNumber"]);
    assert_eq!(body["status"], "IN_PROGRESS");
    assert_eq!(body["priority"], "MEDIUM");
    assert_eq!(body["assignedTo"], Value::Null);

    let r = app
        .patch(&path, &acme.key, json!({"priority": "LOW"}))
        .await;
    let body = r.assert_status(200);
    assert_eq!(body["priority"], "LOW");
    assert_eq!(body["status"], "IN_PROGRESS");

    let r = app
        .patch(&path, &acme.key, json!({"assignedToId": ann.id}))
        .await;
    let body = r.assert_status(200);
    assert_eq!(body["assignedTo"]["id"], json!(ann.id));
    assert_eq!(body["assignedTo"]["name"], "Ann");
    assert_eq!(body["assignedToId"], json!(ann.id));

    let r = app.get(&path, &acme.key).await;
    let read = r.assert_status(200);
    assert_eq!(read["assignedTo"]["name"], "Ann");
    assert_eq!(read["priority"], "LOW");

    let r = app
        .patch(
            &path,
            &acme.key,
            json!({"status": "RESOLVED", "assignedToId": null}),
        )
        .await;
    let body = r.assert_status(200);
    assert_eq!(body["status"], "RESOLVED");
    assert_eq!(body["assignedTo"], Value::Null);
    assert!(is_timestamp(&body["resolvedAt"]), "{body}");

    // Every move is allowed, back to OPEN included.
    let r = app.patch(&path, &acme.key, json!({"status": "OPEN"})).await;
    let body = r.assert_status(200);
    assert_eq!(body["status"], "OPEN");
    assert_eq!(body["resolvedAt"], Value::Null);
    let r = app
        .patch(&path, &acme.key, json!({"status": "CLOSED"}))
        .await;
    assert_eq!(r.assert_status(200)["status"], "CLOSED");
}

async fn escalates_to_another_agent(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = user(&app, acme.company.id, "Ann").await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let t = ticket(&app, &acme, json!({"subject": "Outage", "priority": "LOW"})).await;
    let id = id_of(&t);
    app.patch(
        &format!("/tickets/{id}"),
        &acme.key,
        json!({"assignedToId": ann.id}),
    )
    .await
    .assert_status(200);

    let r = app
        .post(
            &format!("/tickets/{id}/escalate"),
            &acme.key,
            json!({"escalateToId": bob.id, "reason": "Customer is a VIP"}),
        )
        .await;
    let body = r.assert_status(200);
    assert_eq!(body["id"], json!(id));
    assert_eq!(body["status"], "IN_PROGRESS");
    assert_eq!(body["priority"], "URGENT");
    assert_eq!(body["assignedTo"]["id"], json!(bob.id));
    assert_eq!(body["assignedTo"]["name"], "Bob");

    let all = events(&app, acme.company.id).await;
    let (name, data) = all.last().expect("an event");
    assert_eq!(name, "ticket.escalated");
    assert_eq!(data["id"], json!(id));
    assert_eq!(data["status"], "IN_PROGRESS");
    assert_eq!(
        data["escalation"],
        json!({"reason": "Customer is a VIP", "escalatedToId": bob.id,
               "previousAssigneeId": ann.id, "automatic": false, "ruleId": null})
    );

    let r = app
        .get(&format!("/tickets/{id}/activities"), &acme.key)
        .await;
    let timeline = r.assert_status(200)["data"].clone();
    let last = timeline.as_array().expect("data").last().expect("entry");
    assert_eq!(last["type"], "escalated");
    assert_eq!(last["details"]["reason"], "Customer is a VIP");
    assert_eq!(last["details"]["previousAssigneeId"], json!(ann.id));
    assert_eq!(
        last["details"]["changes"]["priority"],
        json!({"from": "LOW", "to": "URGENT"})
    );

    // The store function escalation rules call: automatic, with the rule id.
    let rule = Uuid::now_v7();
    let escalated = store::escalate(
        &app.state.db,
        &test_tenant(acme.company.id),
        Uuid::parse_str(&id).expect("uuid"),
        Escalation {
            to_user: Some(ann.id),
            to_team: None,
            reason: Some("No answer for 2 hours".into()),
            automatic: true,
            rule_id: Some(rule),
        },
        app.state.clock.now(),
        &app.state.link_signer(),
    )
    .await
    .expect("escalated by a rule");
    assert_eq!(escalated.assigned_to_id, Some(ann.id));
    let all = events(&app, acme.company.id).await;
    let (name, data) = all.last().expect("an event");
    assert_eq!(name, "ticket.escalated");
    assert_eq!(data["escalation"]["automatic"], true);
    assert_eq!(data["escalation"]["ruleId"], json!(rule));
    assert_eq!(data["escalation"]["previousAssigneeId"], json!(bob.id));
}

async fn comments_are_added_and_listed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = user(&app, acme.company.id, "Ann").await;
    let t = ticket(&app, &acme, json!({"subject": "Question"})).await;
    let path = format!("/tickets/{}/comments", id_of(&t));

    let r = app
        .post(
            &path,
            &acme.key,
            json!({"body": "Internal note", "authorId": ann.id, "isInternal": true}),
        )
        .await;
    let first = r.assert_status(201).clone();
    assert_eq!(first["ticketId"], t["id"]);
    assert_eq!(first["body"], "Internal note");
    assert_eq!(first["authorId"], json!(ann.id));
    assert_eq!(first["author"]["name"], "Ann");
    assert_eq!(first["isInternal"], true);
    assert!(is_timestamp(&first["createdAt"]));

    let r = app
        .post(&path, &acme.key, json!({"body": "Public reply"}))
        .await;
    let second = r.assert_status(201).clone();
    assert_eq!(second["isInternal"], false);
    assert_eq!(second["author"], Value::Null);

    let r = app.get(&path, &acme.key).await;
    let body = r.assert_status(200);
    assert_eq!(body["total"], 2);
    assert_eq!(body["data"], json!([first, second]), "oldest first");
    let r = app
        .get(&format!("{path}?limit=1&offset=1"), &acme.key)
        .await;
    assert_eq!(r.assert_status(200)["data"], json!([second]));

    // A comment counts as activity on the ticket.
    let r = app.get(&format!("/tickets/{}", id_of(&t)), &acme.key).await;
    assert!(r.assert_status(200)["updatedAt"].as_str() >= t["updatedAt"].as_str());
}

async fn deletes_tickets(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let t = ticket(&app, &acme, json!({"subject": "Spam"})).await;
    let id = id_of(&t);
    app.post(
        &format!("/tickets/{id}/comments"),
        &acme.key,
        json!({"body": "spam indeed"}),
    )
    .await
    .assert_status(201);

    let writer = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::all().without(Scope::TicketsDelete),
        )
        .await;
    app.delete(&format!("/tickets/{id}"), &writer)
        .await
        .assert_error(403, "insufficient_scope");

    let r = app.delete(&format!("/tickets/{id}"), &acme.key).await;
    assert_eq!(r.assert_status(200), &json!({"id": id, "deleted": true}));
    for path in [
        format!("/tickets/{id}"),
        format!("/tickets/{id}/comments"),
        format!("/tickets/{id}/activities"),
    ] {
        app.get(&path, &acme.key)
            .await
            .assert_error(404, "not_found");
    }
    app.delete(&format!("/tickets/{id}"), &acme.key)
        .await
        .assert_error(404, "not_found");
    let r = app.get("/tickets", &acme.key).await;
    assert_eq!(r.assert_status(200)["total"], 0);

    // Numbers are never reused.
    let next = ticket(&app, &acme, json!({"subject": "Next"})).await;
    assert_eq!(next["ticketNumber"], "TKT-000002");
}
