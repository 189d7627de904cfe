//! Ticket search: ranking (subject, then description, then public comments,
//! then newest), every list filter combined with `q`, internal notes by
//! scope, and the index in step with each write.

use super::*;

backend_tests!(
    tickets_rank_subject_then_description_then_comments_then_newest,
    search_combines_with_every_list_filter,
    internal_notes_are_searched_only_with_tickets_write,
    a_ticket_is_searchable_as_soon_as_each_write_returns
);

/// Tickets that never match the searches below (they also keep "refund"
/// a rare word, as in a real desk).
async fn noise(app: &TestApp, acme: &TestCompany) {
    for (subject, description) in [
        ("Printer jam", "Paper is stuck in tray two"),
        ("Login trouble", "The password reset mail never arrives"),
        ("Dark mode", "Please add a dark theme to the dashboard"),
        ("Invoice address", "Our company moved to a new street"),
        ("Slow pages", "The reports page takes a minute to load"),
        ("Export CSV", "We need the tickets as a spreadsheet"),
    ] {
        ticket(
            app,
            acme,
            json!({"subject": subject, "description": description}),
        )
        .await;
    }
}

async fn tickets_rank_subject_then_description_then_comments_then_newest(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    noise(&app, &acme).await;
    let in_subject = ticket(
        &app,
        &acme,
        json!({"subject": "Refund request", "description": "Charged twice this month"}),
    )
    .await;
    let in_description = ticket(
        &app,
        &acme,
        json!({"subject": "Order question", "description": "I would like a refund for it"}),
    )
    .await;
    let in_comment = ticket(
        &app,
        &acme,
        json!({"subject": "Shipping delay", "description": "Where is my parcel now"}),
    )
    .await;
    comment(&app, &acme, &in_comment, "Can we get a refund then", false).await;
    let newer_twin = ticket(
        &app,
        &acme,
        json!({"subject": "Refund request", "description": "Charged twice this month"}),
    )
    .await;

    let expected = vec![newer_twin, in_subject, in_description, in_comment];
    // Stemmed ("refunds"), a prefix ("refu") and the word itself agree.
    for q in ["refund", "Refunds", "refu"] {
        let (ids, total) = searched(&app, &acme.key, "/tickets", q, "").await;
        assert_eq!(ids, expected, "q={q}");
        assert_eq!(total, 4, "q={q}");
    }
}

async fn search_combines_with_every_list_filter(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    noise(&app, &acme).await;
    let agent = supportdesk::users::store::create(
        &app.state.db,
        &supportdesk::auth::Tenant::new(acme.company.id, Mode::Test),
        supportdesk::users::store::NewUser {
            id: None,
            name: "Ann".into(),
            email: "ann@acme.test".into(),
            role: supportdesk::users::Role::Agent.into(),
        },
        app.state.clock.now(),
    )
    .await
    .expect("agent");
    let second_entity = supportdesk::entities::store::create(
        &app.state.db,
        acme.company.id,
        "Second",
        None,
        app.state.clock.now(),
    )
    .await
    .expect("entity");
    let high = ticket(
        &app,
        &acme,
        json!({"subject": "Refund late", "priority": "HIGH", "tags": ["vip"]}),
    )
    .await;
    let low = ticket(
        &app,
        &acme,
        json!({"subject": "Refund early", "priority": "LOW", "tags": ["eu"]}),
    )
    .await;
    let elsewhere = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": "Refund abroad", "entityId": second_entity.id}),
        )
        .await
        .assert_status(201)
        .clone();
    let elsewhere = id_of(&elsewhere);
    app.patch(
        &format!("/tickets/{low}"),
        &acme.key,
        json!({"status": "RESOLVED", "assignedToId": agent.id}),
    )
    .await
    .assert_status(200);
    // Another company's matching ticket never shows.
    ticket(&app, &other, json!({"subject": "Refund late"})).await;

    let cases: [(String, Vec<&String>); 8] = [
        (String::new(), vec![&elsewhere, &low, &high]),
        ("&priority=HIGH".into(), vec![&high]),
        ("&status=RESOLVED".into(), vec![&low]),
        (format!("&assignedToId={}", agent.id), vec![&low]),
        (format!("&entityId={}", acme.entity.id), vec![&low, &high]),
        (format!("&entityId={}", second_entity.id), vec![&elsewhere]),
        ("&tag=vip".into(), vec![&high]),
        ("&anyTag=vip,eu&status=OPEN".into(), vec![&high]),
    ];
    for (filters, expected) in cases {
        let (ids, total) = searched(&app, &acme.key, "/tickets", "refund", &filters).await;
        let expected: Vec<String> = expected.into_iter().cloned().collect();
        assert_eq!(ids, expected, "filters {filters}");
        assert_eq!(total, expected.len() as i64, "filters {filters}");
    }
    let (page, total) = searched(&app, &acme.key, "/tickets", "refund", "&limit=1&offset=1").await;
    assert_eq!((page, total), (vec![low.clone()], 3));
}

async fn internal_notes_are_searched_only_with_tickets_write(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let reader = read_only_key(&app, &acme).await;
    let noted = ticket(&app, &acme, json!({"subject": "Laptop battery"})).await;
    comment(
        &app,
        &acme,
        &noted,
        "Customer owes us; escalate quietly",
        true,
    )
    .await;
    comment(&app, &acme, &noted, "We are looking into it", false).await;

    assert_eq!(
        searched(&app, &reader, "/tickets", "quietly", "").await,
        (vec![], 0)
    );
    assert_eq!(
        searched(&app, &acme.key, "/tickets", "quietly", "").await,
        (vec![noted.clone()], 1)
    );
    // Public text still finds it for the reader, even with a note word
    // among the words.
    assert_eq!(
        searched(&app, &reader, "/tickets", "looking", "").await,
        (vec![noted.clone()], 1)
    );
    assert_eq!(
        searched(&app, &reader, "/tickets", "battery escalate", "").await,
        (vec![], 0)
    );
}

async fn a_ticket_is_searchable_as_soon_as_each_write_returns(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = ticket(
        &app,
        &acme,
        json!({"subject": "Gearbox noise", "description": "Rattles on cold mornings"}),
    )
    .await;
    assert_eq!(
        searched(&app, &acme.key, "/tickets", "rattles", "").await.0,
        vec![id.clone()]
    );
    comment(&app, &acme, &id, "Replaced the flywheel", false).await;
    assert_eq!(
        searched(&app, &acme.key, "/tickets", "flywheel", "")
            .await
            .0,
        vec![id.clone()]
    );
    app.delete(&format!("/tickets/{id}"), &acme.key)
        .await
        .assert_status(200);
    assert_eq!(
        searched(&app, &acme.key, "/tickets", "gearbox", "").await,
        (vec![], 0)
    );
}
