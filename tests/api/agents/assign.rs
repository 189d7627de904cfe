//! `assignOnReply`: an agent's reply assigns an unassigned ticket or chat
//! to them when the company asks for it, and only then.

use reqwest::Method;
use serde_json::{Value, json};

use super::{send, signed_in, ticket, user_id};
use crate::backend_tests;
use crate::csat::open_chat;
use crate::support::{Backend, TestApp, TestCompany};
use crate::tickets::user;

backend_tests!(
    assign_on_reply_is_off_by_default_and_can_be_turned_on,
    a_reply_assigns_an_unassigned_ticket_to_its_agent,
    a_reply_assigns_nothing_without_the_setting,
    a_reply_keeps_the_tickets_assignee,
    a_reply_assigns_an_unassigned_chat_to_its_agent,
);

async fn assign_on_reply(app: &TestApp, acme: &TestCompany) {
    let r = app
        .patch("/settings", &acme.key, json!({"assignOnReply": true}))
        .await;
    assert_eq!(r.assert_status(200)["assignOnReply"], true);
}

/// The agent's public reply to the ticket.
async fn reply(app: &TestApp, browser: &crate::accounts::Browser, ticket: &str) {
    send(
        app,
        browser,
        Method::POST,
        &format!("/tickets/{ticket}/comments"),
        json!({"body": "On it"}),
    )
    .await
    .assert_status(201);
}

async fn assignee(app: &TestApp, acme: &TestCompany, ticket: &str) -> Value {
    let r = app.get(&format!("/tickets/{ticket}"), &acme.key).await;
    r.assert_status(200)["assignedToId"].clone()
}

async fn assign_on_reply_is_off_by_default_and_can_be_turned_on(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = app.get("/settings", &acme.key).await;
    assert_eq!(r.assert_status(200)["assignOnReply"], false);

    assign_on_reply(&app, &acme).await;

    let r = app.get("/settings", &acme.key).await;
    assert_eq!(r.assert_status(200)["assignOnReply"], true);
}

async fn a_reply_assigns_an_unassigned_ticket_to_its_agent(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    assign_on_reply(&app, &acme).await;
    let ann = signed_in(&app, &acme, "ann@acme.example", "agent").await;
    let ticket = ticket(&app, &acme).await;

    reply(&app, &ann, &ticket).await;

    assert_eq!(assignee(&app, &acme, &ticket).await, user_id(&ann));
}

async fn a_reply_assigns_nothing_without_the_setting(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = signed_in(&app, &acme, "ann@acme.example", "agent").await;
    let ticket = ticket(&app, &acme).await;

    reply(&app, &ann, &ticket).await;

    assert_eq!(assignee(&app, &acme, &ticket).await, Value::Null);
}

async fn a_reply_keeps_the_tickets_assignee(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    assign_on_reply(&app, &acme).await;
    let ann = signed_in(&app, &acme, "ann@acme.example", "agent").await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let ticket = ticket(&app, &acme).await;
    app.patch(
        &format!("/tickets/{ticket}"),
        &acme.key,
        json!({"assignedToId": bob.id}),
    )
    .await
    .assert_status(200);

    reply(&app, &ann, &ticket).await;

    assert_eq!(assignee(&app, &acme, &ticket).await, json!(bob.id));
}

async fn a_reply_assigns_an_unassigned_chat_to_its_agent(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    assign_on_reply(&app, &acme).await;
    let ann = signed_in(&app, &acme, "ann@acme.example", "agent").await;
    let (chat, _) = open_chat(&app, &acme).await;

    send(
        &app,
        &ann,
        Method::POST,
        &format!("/chat/sessions/{chat}/messages"),
        json!({"body": "Hello, how can I help?", "senderType": "agent",
               "senderId": user_id(&ann)}),
    )
    .await
    .assert_status(201);

    let r = app.get(&format!("/chat/sessions/{chat}"), &acme.key).await;
    assert_eq!(r.assert_status(200)["assigneeId"], user_id(&ann));
}
