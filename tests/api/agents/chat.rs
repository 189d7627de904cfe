//! Who sent a chat message: an agent (session or personal key, REST or
//! socket) sends as themselves and cannot name another agent; with no
//! `senderId` the message is theirs.

use reqwest::Method;
use serde_json::{Value, json};

use super::{send, signed_in, user_id};
use crate::backend_tests;
use crate::chat::client::Client;
use crate::chat::{agent, new_session};
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    a_signed_in_agent_cannot_send_a_chat_message_as_another_agent,
    a_personal_key_cannot_send_a_chat_message_as_another_agent,
    an_agents_socket_cannot_send_a_chat_message_as_another_agent,
    a_signed_in_agents_chat_message_without_sender_id_is_theirs,
);

/// A chat session of `acme` (made by its key); its id.
async fn chat(app: &TestApp, acme: &TestCompany) -> String {
    let session = new_session(app, acme, json!({"visitorName": "Vi"})).await;
    session["id"].as_str().expect("id").to_owned()
}

/// The session's messages, as the company's key reads them.
async fn messages(app: &TestApp, acme: &TestCompany, session: &str) -> Vec<Value> {
    let r = app
        .get(&format!("/chat/sessions/{session}"), &acme.key)
        .await;
    r.assert_status(200)["messages"]
        .as_array()
        .expect("messages")
        .clone()
}

async fn a_signed_in_agent_cannot_send_a_chat_message_as_another_agent(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = signed_in(&app, &acme, "ann@acme.example", "agent").await;
    let bob = agent(&app, &acme, "Bob").await;
    let session = chat(&app, &acme).await;

    let r = send(
        &app,
        &ann,
        Method::POST,
        &format!("/chat/sessions/{session}/messages"),
        json!({"body": "Bob says hi", "senderType": "agent", "senderId": bob}),
    )
    .await;

    crate::support::assert_invalid(&r, &["senderId"]);
    assert_eq!(messages(&app, &acme, &session).await, Vec::<Value>::new());
}

async fn a_personal_key_cannot_send_a_chat_message_as_another_agent(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = signed_in(&app, &acme, "ann@acme.example", "agent").await;
    let key = personal_key(&app, &ann).await;
    let bob = agent(&app, &acme, "Bob").await;
    let session = chat(&app, &acme).await;

    let r = app
        .post(
            &format!("/chat/sessions/{session}/messages"),
            &key,
            json!({"body": "Bob says hi", "senderType": "agent", "senderId": bob}),
        )
        .await;

    crate::support::assert_invalid(&r, &["senderId"]);
    assert_eq!(messages(&app, &acme, &session).await, Vec::<Value>::new());
}

async fn an_agents_socket_cannot_send_a_chat_message_as_another_agent(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = signed_in(&app, &acme, "ann@acme.example", "agent").await;
    let key = personal_key(&app, &ann).await;
    let bob = agent(&app, &acme, "Bob").await;
    let session = chat(&app, &acme).await;
    let mut socket = Client::key(&app, &key).await;

    socket
        .send(json!({"type": "message", "id": "m1", "sessionId": session,
            "senderId": bob, "body": "Bob says hi"}))
        .await;

    let reply = socket.next_of("error").await;
    assert_eq!(reply["code"], "validation_failed", "{reply}");
    assert_eq!(messages(&app, &acme, &session).await, Vec::<Value>::new());
}

async fn a_signed_in_agents_chat_message_without_sender_id_is_theirs(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = signed_in(&app, &acme, "ann@acme.example", "agent").await;
    let session = chat(&app, &acme).await;

    let r = send(
        &app,
        &ann,
        Method::POST,
        &format!("/chat/sessions/{session}/messages"),
        json!({"body": "Hello", "senderType": "agent"}),
    )
    .await;

    assert_eq!(r.assert_status(201)["senderId"], user_id(&ann));
}

/// A personal key of the signed-in `browser` for chat.
async fn personal_key(app: &TestApp, browser: &crate::accounts::Browser) -> String {
    let body = json!({"name": "My script", "scopes": ["chat:read", "chat:write"]});
    let r = send(app, browser, Method::POST, "/auth/keys", body).await;
    r.assert_status(201)["key"]
        .as_str()
        .expect("key")
        .to_owned()
}
