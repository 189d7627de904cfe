//! Collision-safe chat writes: a session's PATCH (its assignment too), tag
//! edit or message sent with `If-Match` on another version than the
//! session's is 412 `version_conflict` with `currentVersion`, and changes
//! nothing; on the session's version it goes through.

use reqwest::Method;
use serde_json::{Value, json};

use super::send_with;
use crate::backend_tests;
use crate::csat::open_chat;
use crate::support::{Backend, TestApp, TestCompany, TestResponse};

backend_tests!(
    a_stale_if_match_on_a_session_patch_is_412_and_changes_nothing,
    a_stale_if_match_on_an_assignment_is_412_and_assigns_nothing,
    a_stale_if_match_on_a_tag_edit_is_412_and_changes_nothing,
    a_stale_if_match_on_a_message_is_412_and_stores_nothing,
    a_message_on_the_current_version_is_sent,
);

/// An open chat, changed once since it began.
struct Changed {
    id: String,
    /// The version it began at: stale.
    first: i64,
    /// Its version now.
    now: i64,
}

/// An open chat of `acme`, changed once by its key since it began (its tags),
/// so `If-Match` on the version it began at is stale.
async fn changed_chat(app: &TestApp, acme: &TestCompany) -> Changed {
    let (id, _) = open_chat(app, acme).await;
    let path = format!("/chat/sessions/{id}");
    let first = app.get(&path, &acme.key).await.assert_status(200)["version"]
        .as_i64()
        .expect("version");
    let r = app.patch(&path, &acme.key, json!({"tags": ["vip"]})).await;
    let now = r.assert_status(200)["version"].as_i64().expect("version");
    Changed { id, first, now }
}

/// `method` on the chat's path `/chat/sessions/{id}{suffix}` with `If-Match`
/// on the version it began at: the stale write each test sends.
async fn stale(
    app: &TestApp,
    acme: &TestCompany,
    chat: &Changed,
    (method, suffix): (Method, &str),
    body: Value,
) -> TestResponse {
    let path = format!("/chat/sessions/{}{suffix}", chat.id);
    if_match(app, acme, (method, &path), chat.first, body).await
}

/// `method path` by `acme`'s key with `If-Match: "version"`.
async fn if_match(
    app: &TestApp,
    acme: &TestCompany,
    (method, path): (Method, &str),
    version: i64,
    body: Value,
) -> TestResponse {
    let tag = format!("\"{version}\"");
    send_with(app, method, path, &acme.key, &[("If-Match", &tag)], body).await
}

async fn session(app: &TestApp, acme: &TestCompany, id: &str) -> Value {
    let r = app.get(&format!("/chat/sessions/{id}"), &acme.key).await;
    r.assert_status(200).clone()
}

async fn a_stale_if_match_on_a_session_patch_is_412_and_changes_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let chat = changed_chat(&app, &acme).await;
    let (id, now) = (&chat.id, chat.now);

    let r = stale(
        &app,
        &acme,
        &chat,
        (Method::PATCH, ""),
        json!({"status": "CLOSED"}),
    )
    .await;

    r.assert_error(412, "version_conflict");
    assert_eq!(r.body["currentVersion"], now);
    let after = session(&app, &acme, id).await;
    assert_eq!(
        (&after["status"], &after["version"]),
        (&json!("ACTIVE"), &json!(now))
    );
}

async fn a_stale_if_match_on_an_assignment_is_412_and_assigns_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let agent = crate::chat::agent(&app, &acme, "Ann").await;
    let chat = changed_chat(&app, &acme).await;
    let (id, now) = (&chat.id, chat.now);

    let r = stale(
        &app,
        &acme,
        &chat,
        (Method::PATCH, ""),
        json!({"assigneeId": agent}),
    )
    .await;

    r.assert_error(412, "version_conflict");
    assert_eq!(r.body["currentVersion"], now);
    assert_eq!(session(&app, &acme, id).await["assigneeId"], Value::Null);
}

async fn a_stale_if_match_on_a_tag_edit_is_412_and_changes_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let chat = changed_chat(&app, &acme).await;

    let r = stale(
        &app,
        &acme,
        &chat,
        (Method::POST, "/tags"),
        json!({"add": ["urgent"]}),
    )
    .await;

    r.assert_error(412, "version_conflict");
    assert_eq!(session(&app, &acme, &chat.id).await["tags"], json!(["vip"]));
}

async fn a_stale_if_match_on_a_message_is_412_and_stores_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let chat = changed_chat(&app, &acme).await;
    let (id, now) = (&chat.id, chat.now);
    let body = json!({"body": "Based on what I saw", "senderType": "system"});
    let before = session(&app, &acme, id).await["messages"].clone();

    let r = stale(&app, &acme, &chat, (Method::POST, "/messages"), body).await;

    r.assert_error(412, "version_conflict");
    assert_eq!(r.body["currentVersion"], now);
    let after = session(&app, &acme, id).await;
    assert_eq!(
        (&after["messages"], &after["version"]),
        (&before, &json!(now))
    );
}

async fn a_message_on_the_current_version_is_sent(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let Changed { id, now, .. } = changed_chat(&app, &acme).await;
    let path = format!("/chat/sessions/{id}/messages");
    let body = json!({"body": "Hello", "senderType": "system"});

    let r = if_match(&app, &acme, (Method::POST, &path), now, body).await;

    assert_eq!(r.assert_status(201)["body"], "Hello");
}
