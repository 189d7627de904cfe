//! Chat session search: by visitor name, visitor email and message bodies,
//! ranked in that order, with the list filters, and in step with writes.

use super::*;

backend_tests!(
    sessions_are_found_by_name_email_and_message_body,
    sessions_rank_name_then_email_then_messages_then_newest
);

async fn session(app: &TestApp, acme: &TestCompany, name: &str, email: &str) -> String {
    let body = json!({"entityId": acme.entity.id, "visitorName": name, "visitorEmail": email});
    id_of(
        app.post("/chat/sessions", &acme.key, body)
            .await
            .assert_status(201),
    )
}

async fn message(app: &TestApp, acme: &TestCompany, session: &str, body: &str) {
    app.post(
        &format!("/chat/sessions/{session}/messages"),
        &acme.key,
        json!({"body": body, "senderType": "visitor"}),
    )
    .await
    .assert_status(201);
}

async fn sessions_are_found_by_name_email_and_message_body(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    let marta = session(&app, &acme, "Marta Lindqvist", "marta@example.com").await;
    let jonas = session(&app, &acme, "Visitor", "jonas.berg@example.org").await;
    message(&app, &acme, &jonas, "My parcel arrived broken").await;
    session(&app, &other, "Marta Lindqvist", "marta@example.com").await;

    let by = |q: &'static str| {
        let (app, key) = (&app, &acme.key);
        async move { searched(app, key, "/chat/sessions", q, "").await }
    };
    assert_eq!(by("lindqvist").await, (vec![marta.clone()], 1));
    assert_eq!(by("jonas.berg@example.org").await, (vec![jonas.clone()], 1));
    assert_eq!(by("parcel broken").await, (vec![jonas.clone()], 1));
    // Searchable right after the write: a new message, then a closed
    // session keeps its text.
    message(&app, &acme, &marta, "Where is the warranty form").await;
    assert_eq!(by("warranty").await, (vec![marta.clone()], 1));
    app.patch(
        &format!("/chat/sessions/{marta}"),
        &acme.key,
        json!({"status": "CLOSED"}),
    )
    .await
    .assert_status(200);
    let (ids, _) = searched(
        &app,
        &acme.key,
        "/chat/sessions",
        "warranty",
        "&status=CLOSED",
    )
    .await;
    assert_eq!(ids, vec![marta.clone()]);
    let (ids, _) = searched(
        &app,
        &acme.key,
        "/chat/sessions",
        "warranty",
        "&status=ACTIVE",
    )
    .await;
    assert!(ids.is_empty(), "{ids:?}");
}

async fn sessions_rank_name_then_email_then_messages_then_newest(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    for (name, email) in [
        ("Ada Byron", "ada@example.com"),
        ("Bo Chen", "bo@example.com"),
        ("Cy Diaz", "cy@example.com"),
        ("Di Evans", "di@example.com"),
    ] {
        let id = session(&app, &acme, name, email).await;
        message(&app, &acme, &id, "Hello there, quick question").await;
    }
    let in_message = session(&app, &acme, "Ed Fox", "ed@example.com").await;
    message(&app, &acme, &in_message, "Ask Rosalind about it").await;
    let in_email = session(&app, &acme, "Flo Gray", "rosalind.g@example.com").await;
    let in_name = session(&app, &acme, "Rosalind Hale", "rh@example.com").await;
    let newer_in_name = session(&app, &acme, "Rosalind Hale", "rh@example.com").await;

    let (ids, total) = searched(&app, &acme.key, "/chat/sessions", "rosalind", "").await;
    assert_eq!(ids, vec![newer_in_name, in_name, in_email, in_message]);
    assert_eq!(total, 4);
}
