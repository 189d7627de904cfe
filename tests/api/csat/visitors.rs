//! Tickets made from a widget chat carry the chat's `visitor`, and that
//! visitor's token may rate the ticket once it is resolved.

use serde_json::{Value, json};
use supportdesk::widget::identity::sign;

use super::rate;
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany, assert_invalid};
use crate::widget::start_chat;

backend_tests!(
    a_ticket_from_a_verified_chat_carries_its_visitor,
    a_typed_unconfirmed_email_is_not_copied_to_the_ticket,
    the_chat_token_rates_the_ticket_made_from_it,
);

async fn verified_chat(app: &TestApp, acme: &TestCompany) -> Value {
    let path = format!("/entities/{}/widget-secret/rotate", acme.entity.id);
    let rotated = app.post(&path, &acme.key, json!({})).await;
    let secret = rotated.assert_status(200)["secret"]
        .as_str()
        .expect("secret")
        .to_string();
    let now = chrono::Utc::now().timestamp();
    let claims = json!({"sub": "cust-42", "email": "kim@shop.example", "name": "Kim",
        "iat": now, "exp": now + 600});
    start_chat(
        app,
        &acme.entity.widget_key_test,
        json!({"identityToken": sign(&claims, &secret)}),
    )
    .await
}

async fn ticket_from(app: &TestApp, acme: &TestCompany, chat: &Value) -> Value {
    let r = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": "Follow-up", "entityId": acme.entity.id,
                   "chatSessionId": chat["id"]}),
        )
        .await;
    r.assert_status(201).clone()
}

async fn a_ticket_from_a_verified_chat_carries_its_visitor(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let chat = verified_chat(&app, &acme).await;

    let ticket = ticket_from(&app, &acme, &chat).await;
    let visitor = json!({"externalId": "cust-42", "email": "kim@shop.example",
        "name": "Kim", "verified": true});
    assert_eq!(ticket["visitor"], visitor);
    assert_eq!(ticket["visitorEmail"], "kim@shop.example");
    assert_eq!(ticket["chatSessionId"], chat["id"]);
    let id = ticket["id"].as_str().expect("id");
    let read = app.get(&format!("/tickets/{id}"), &acme.key).await;
    assert_eq!(read.assert_status(200)["visitor"], visitor);

    // Not from a chat: no visitor.
    let plain = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": "Other", "entityId": acme.entity.id,
                   "visitorEmail": "ann@example.com"}),
        )
        .await;
    assert_eq!(plain.assert_status(201)["visitor"], Value::Null);

    // Another tenant's or an unknown session: 400, nothing created.
    let unknown = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": "X", "entityId": acme.entity.id,
                   "chatSessionId": uuid::Uuid::now_v7()}),
        )
        .await;
    assert_invalid(&unknown, &["chatSessionId"]);
    let list = app.get("/tickets", &acme.key).await;
    assert_eq!(list.assert_status(200)["total"], 2);
}

async fn a_typed_unconfirmed_email_is_not_copied_to_the_ticket(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let chat = start_chat(
        &app,
        &acme.entity.widget_key_test,
        json!({"visitorName": "Zoe", "visitorEmail": "zoe@example.com"}),
    )
    .await;
    let ticket = ticket_from(&app, &acme, &chat).await;
    assert_eq!(ticket["visitorEmail"], Value::Null);
    assert_eq!(
        ticket["visitor"],
        json!({"externalId": null, "email": null, "name": "Zoe", "verified": false})
    );
}

async fn the_chat_token_rates_the_ticket_made_from_it(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let chat = verified_chat(&app, &acme).await;
    let token = chat["visitorToken"].as_str().expect("token");
    let other = verified_chat(&app, &acme).await;
    let ticket = ticket_from(&app, &acme, &chat).await;
    let id = ticket["id"].as_str().expect("id");
    app.patch(
        &format!("/tickets/{id}"),
        &acme.key,
        json!({"status": "RESOLVED"}),
    )
    .await
    .assert_status(200);

    let other_token = other["visitorToken"].as_str().expect("token");
    rate(&app, Some(other_token), json!({"ticketId": id, "score": 1}))
        .await
        .assert_error(404, "not_found");
    let r = rate(&app, Some(token), json!({"ticketId": id, "score": 5})).await;
    assert_eq!(r.assert_status(201)["ticketId"], json!(id));
}
