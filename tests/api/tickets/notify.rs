//! What each operation records: events, the timeline, visitor emails.

use super::*;

backend_tests!(
    events_and_timeline_follow_each_operation,
    visitor_emails_on_creation_and_resolution_only,
    a_create_names_its_number_in_its_timeline_entry,
    a_created_ticket_is_queued_to_webhooks_as_it_reads_back,
);

async fn events_and_timeline_follow_each_operation(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = user(&app, acme.company.id, "Ann").await;
    let t = ticket(&app, &acme, json!({"subject": "Broken link"})).await;
    let id = id_of(&t);
    let path = format!("/tickets/{id}");

    let all = events(&app, acme.company.id).await;
    assert_eq!(names(&all), ["ticket.created"]);
    let created = &all[0].1;
    for field in [
        "id",
        "ticketNumber",
        "subject",
        "status",
        "priority",
        "entityId",
        "createdAt",
    ] {
        assert_eq!(created[field], t[field], "{field}");
    }
    assert_eq!(activity_types(&app, &acme.key, &id).await, ["created"]);

    // Two fields in one PATCH: one event listing both changes.
    app.patch(
        &path,
        &acme.key,
        json!({"status": "IN_PROGRESS", "priority": "HIGH"}),
    )
    .await
    .assert_status(200);
    let all = events(&app, acme.company.id).await;
    assert_eq!(names(&all), ["ticket.created", "ticket.updated"]);
    assert_eq!(
        all[1].1["changes"],
        json!({"status": {"from": "OPEN", "to": "IN_PROGRESS"},
               "priority": {"from": "MEDIUM", "to": "HIGH"}})
    );
    assert_eq!(all[1].1["status"], "IN_PROGRESS");

    // A PATCH that repeats the current values: 200, no event, no entry.
    let r = app
        .patch(
            &path,
            &acme.key,
            json!({"status": "IN_PROGRESS", "priority": "HIGH", "assignedToId": null}),
        )
        .await;
    assert_eq!(r.assert_status(200)["status"], "IN_PROGRESS");
    assert_eq!(events(&app, acme.company.id).await.len(), 2);
    assert_eq!(
        activity_types(&app, &acme.key, &id).await,
        ["created", "status_changed", "priority_changed"]
    );

    app.patch(&path, &acme.key, json!({"assignedToId": ann.id}))
        .await
        .assert_status(200);
    app.patch(&path, &acme.key, json!({"status": "RESOLVED"}))
        .await
        .assert_status(200);
    let r = app
        .post(
            &format!("{path}/comments"),
            &acme.key,
            json!({"body": "Fixed the link", "authorId": ann.id}),
        )
        .await;
    let comment = r.assert_status(201).clone();
    app.post(
        &format!("{path}/escalate"),
        &acme.key,
        json!({"escalateToId": ann.id}),
    )
    .await
    .assert_status(200);

    let all = events(&app, acme.company.id).await;
    assert_eq!(
        names(&all),
        [
            "ticket.created",
            "ticket.updated",
            "ticket.updated",
            "ticket.updated",
            "ticket.resolved",
            "comment.created",
            "ticket.escalated",
        ]
    );
    assert_eq!(
        all[2].1["changes"],
        json!({"assignedToId": {"from": null, "to": ann.id}})
    );
    assert_eq!(all[2].1["assignedTo"]["name"], "Ann");
    assert_eq!(
        all[3].1["changes"],
        json!({"status": {"from": "IN_PROGRESS", "to": "RESOLVED"}})
    );
    assert_eq!(all[4].1["id"], json!(id));
    assert_eq!(all[4].1["status"], "RESOLVED");
    assert_eq!(all[5].1["ticketId"], json!(id));
    assert_eq!(all[5].1["id"], comment["id"]);
    assert_eq!(all[5].1["body"], "Fixed the link");
    assert_eq!(all[6].1["escalation"]["reason"], Value::Null);
    assert_eq!(all[6].1["escalation"]["previousAssigneeId"], json!(ann.id));

    let r = app.get(&format!("{path}/activities"), &acme.key).await;
    let body = r.assert_status(200);
    let timeline = body["data"].as_array().expect("data");
    let types: Vec<&str> = timeline
        .iter()
        .map(|a| a["type"].as_str().expect("type"))
        .collect();
    assert_eq!(
        types,
        [
            "created",
            "status_changed",
            "priority_changed",
            "assignee_changed",
            "status_changed",
            "commented",
            "escalated",
        ]
    );
    assert_eq!(body["total"], 7);
    assert_eq!(timeline[3]["to"], json!(ann.id));
    assert_eq!(timeline[4]["from"], "IN_PROGRESS");
    assert_eq!(timeline[4]["to"], "RESOLVED");
    assert_eq!(timeline[5]["details"]["commentId"], comment["id"]);
    assert_eq!(timeline[6]["details"]["escalatedToId"], json!(ann.id));
    assert!(
        timeline
            .iter()
            .all(|a| a["ticketId"] == json!(id) && is_timestamp(&a["createdAt"]))
    );
}

async fn visitor_emails_on_creation_and_resolution_only(backend: Backend) {
    // No workers: the queued emails stay as written.
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let ann = user(&app, acme.company.id, "Ann").await;

    let t = ticket(
        &app,
        &acme,
        json!({"subject": "Lost parcel", "visitorEmail": " zoe@example.com "}),
    )
    .await;
    assert_eq!(t["visitorEmail"], "zoe@example.com");
    let id = id_of(&t);
    let path = format!("/tickets/{id}");
    let mails = emails(&app, acme.company.id).await;
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0]["to"], "zoe@example.com");
    assert!(
        mails[0]["subject"]
            .as_str()
            .expect("subject")
            .contains("TKT-000001")
    );
    assert!(
        mails[0]["text"]
            .as_str()
            .expect("text")
            .contains("TKT-000001")
    );

    // Neither changes short of resolution nor comments email the visitor.
    app.patch(
        &path,
        &acme.key,
        json!({"priority": "HIGH", "status": "IN_PROGRESS", "assignedToId": ann.id}),
    )
    .await
    .assert_status(200);
    app.post(
        &format!("{path}/comments"),
        &acme.key,
        json!({"body": "Looking"}),
    )
    .await
    .assert_status(201);
    app.post(
        &format!("{path}/escalate"),
        &acme.key,
        json!({"escalateToId": ann.id}),
    )
    .await
    .assert_status(200);
    assert_eq!(emails(&app, acme.company.id).await.len(), 1);

    app.patch(&path, &acme.key, json!({"status": "RESOLVED"}))
        .await
        .assert_status(200);
    // Repeating it or closing afterwards sends nothing more.
    app.patch(&path, &acme.key, json!({"status": "RESOLVED"}))
        .await
        .assert_status(200);
    app.patch(&path, &acme.key, json!({"status": "CLOSED"}))
        .await
        .assert_status(200);
    let mails = emails(&app, acme.company.id).await;
    assert_eq!(mails.len(), 2);
    assert_eq!(mails[1]["to"], "zoe@example.com");
    let subject = mails[1]["subject"].as_str().expect("subject");
    assert!(subject.contains("TKT-000001") && subject.contains("resolved"));

    // No visitor email, no mail.
    let quiet = ticket(&app, &acme, json!({"subject": "No email"})).await;
    app.patch(
        &format!("/tickets/{}", id_of(&quiet)),
        &acme.key,
        json!({"status": "RESOLVED"}),
    )
    .await
    .assert_status(200);
    assert_eq!(emails(&app, acme.company.id).await.len(), 2);
}

/// The `created` entry's details name the number the ticket got, whether
/// the create wrote the row alone (on Postgres one statement writes the
/// row, the entry and the event, the number known only to Postgres) or
/// with tags.
async fn a_create_names_its_number_in_its_timeline_entry(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let plain = ticket(&app, &acme, json!({"subject": "Plain"})).await;
    let tagged = ticket(&app, &acme, json!({"subject": "Tagged", "tags": ["vip"]})).await;
    for created in [plain, tagged] {
        let path = format!("/tickets/{}/activities", id_of(&created));
        let r = app.get(&path, &acme.key).await;
        let entry = &r.assert_status(200)["data"][0];
        assert_eq!(entry["details"]["ticketNumber"], created["ticketNumber"]);
    }
}

/// A `ticket.created` delivery carries the ticket as its GET answers, its
/// number included.
async fn a_created_ticket_is_queued_to_webhooks_as_it_reads_back(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (webhook, _) = crate::outbound::support::create_webhook(
        &app,
        &acme.key,
        "https://hooks.example.com/tickets",
        &["ticket.created"],
    )
    .await;
    let created = ticket(&app, &acme, json!({"subject": "Delivered"})).await;
    let read = app
        .get(&format!("/tickets/{}", id_of(&created)), &acme.key)
        .await;
    let bodies = supportdesk::on_db!(&app.state.db, c => sqlx::query_scalar::<_, String>(
        "SELECT body FROM webhook_deliveries WHERE webhook_id = $1")
        .bind(Uuid::parse_str(&webhook).expect("webhook id"))
        .fetch_all(c)
        .await
        .expect("deliveries read"));
    let [body] = bodies.as_slice() else {
        panic!("one delivery, got {bodies:?}");
    };
    let body: Value = serde_json::from_str(body).expect("a JSON body");
    assert_eq!(&body["data"], read.assert_status(200));
}
