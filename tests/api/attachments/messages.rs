//! Attachments on chat messages: over REST and over the socket, and a
//! visitor's own uploads with its visitor token.

use super::*;
use crate::chat::client::Client;
use crate::chat::new_session;

backend_tests!(
    a_rest_message_carries_its_attachments,
    a_socket_message_carries_its_attachments,
    a_visitor_socket_cannot_name_a_keys_upload,
    a_visitor_uploads_an_image_for_its_session,
    a_visitor_upload_refuses_other_types,
    a_visitor_upload_fits_only_its_session,
    a_visitor_upload_needs_a_visitor_token,
    a_visitor_session_has_its_own_upload_budget,
);

pub(super) async fn visitor_upload(
    app: &TestApp,
    token: &str,
    name: &str,
    bytes: Vec<u8>,
) -> TestResponse {
    TestResponse::from(
        app.client
            .post(app.url(&format!("/widget/v1/attachments?filename={name}")))
            .header("Authorization", format!("Bearer {token}"))
            .body(bytes)
            .send()
            .await,
    )
    .await
}

pub(super) fn token_of(session: &Value) -> String {
    session["visitorToken"].as_str().expect("token").to_string()
}

async fn a_rest_message_carries_its_attachments(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({"visitorName": "Vic"})).await;
    let file = uploaded(&app, &acme, b"chat file").await;
    let path = format!("/chat/sessions/{}/messages", id_of(&session));
    let r = app
        .post(
            &path,
            &acme.key,
            json!({"body": "here", "senderType": "visitor", "attachmentIds": [file["id"]]}),
        )
        .await;
    let sent = r.assert_status(201);
    assert_eq!(sent["attachments"][0]["id"], file["id"]);
    let read = app
        .get(&format!("/chat/sessions/{}", id_of(&session)), &acme.key)
        .await;
    assert_eq!(
        read.assert_status(200)["messages"][0]["attachments"][0]["id"],
        file["id"]
    );
}

async fn a_socket_message_carries_its_attachments(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({"visitorName": "Vic"})).await;
    let token = token_of(&session);
    let r = visitor_upload(&app, &token, "shot.png", PNG.to_vec()).await;
    let file = r.assert_status(201).clone();
    let mut visitor = Client::token(&app, &token).await;
    visitor
        .send(
            json!({"type": "message", "sessionId": id_of(&session), "body": "look",
            "attachmentIds": [file["id"]], "id": "m1"}),
        )
        .await;
    let reply = visitor.next_of("chat.message").await;
    let listed = &reply["data"]["attachments"][0];
    assert_eq!(listed["id"], file["id"], "{reply}");
    assert!(listed["url"].as_str().is_some_and(|u| u.contains("sig=")));
}

async fn a_visitor_socket_cannot_name_a_keys_upload(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({"visitorName": "Vic"})).await;
    let file = uploaded(&app, &acme, b"the company's file").await;
    let mut visitor = Client::token(&app, &token_of(&session)).await;
    visitor
        .send(
            json!({"type": "message", "sessionId": id_of(&session), "body": "look",
            "attachmentIds": [file["id"]], "id": "m1"}),
        )
        .await;
    let reply = visitor.next_of("error").await;
    assert_eq!(reply["code"], "validation_failed", "{reply}");
}

async fn a_visitor_uploads_an_image_for_its_session(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({"visitorName": "Vic"})).await;
    let r = visitor_upload(&app, &token_of(&session), "shot.png", PNG.to_vec()).await;
    let file = r.assert_status(201).clone();
    assert_eq!(file["contentType"], "image/png");
    let path = format!("/chat/sessions/{}/messages", id_of(&session));
    let r = app
        .post(
            &path,
            &acme.key,
            json!({"body": "from the visitor", "senderType": "visitor",
                "attachmentIds": [file["id"]]}),
        )
        .await;
    assert_eq!(r.assert_status(201)["attachments"][0]["id"], file["id"]);
}

async fn a_visitor_upload_refuses_other_types(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({"visitorName": "Vic"})).await;
    let r = visitor_upload(&app, &token_of(&session), "x.html", b"<p>hi</p>".to_vec()).await;
    r.assert_error(415, "unsupported_media_type");
    assert_eq!(attachment_rows(&app).await, 0);
}

async fn a_visitor_upload_fits_only_its_session(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let mine = new_session(&app, &acme, json!({"visitorName": "Vic"})).await;
    let other = new_session(&app, &acme, json!({"visitorName": "Val"})).await;
    let r = visitor_upload(&app, &token_of(&mine), "shot.png", PNG.to_vec()).await;
    let file = r.assert_status(201).clone();
    let elsewhere = format!("/chat/sessions/{}/messages", id_of(&other));
    let r = app
        .post(
            &elsewhere,
            &acme.key,
            json!({"body": "x", "senderType": "visitor", "attachmentIds": [file["id"]]}),
        )
        .await;
    assert_invalid(&r, &["attachmentIds"]);
    let r = ticket_with(&app, &acme, json!([file["id"]])).await;
    assert_invalid(&r, &["attachmentIds"]);
}

async fn a_visitor_upload_needs_a_visitor_token(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let r = visitor_upload(&app, "vt_forged", "shot.png", PNG.to_vec()).await;
    r.assert_error(401, "invalid_token");
}

async fn a_visitor_session_has_its_own_upload_budget(backend: Backend) {
    let app = TestApp::spawn_with(backend, |config| {
        config.visitor_upload_rate = supportdesk::config::MessageRate {
            limit: 2,
            window: std::time::Duration::from_secs(3600),
        };
    })
    .await;
    let acme = app.company().await;
    let spent = new_session(&app, &acme, json!({"visitorName": "Vic"})).await;
    let other = new_session(&app, &acme, json!({"visitorName": "Val"})).await;
    for _ in 0..2 {
        visitor_upload(&app, &token_of(&spent), "shot.png", PNG.to_vec())
            .await
            .assert_status(201);
    }
    visitor_upload(&app, &token_of(&spent), "shot.png", PNG.to_vec())
        .await
        .assert_error(429, "rate_limited");
    // The same address, another session: its own budget is whole.
    visitor_upload(&app, &token_of(&other), "shot.png", PNG.to_vec())
        .await
        .assert_status(201);
}
