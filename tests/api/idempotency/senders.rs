//! A stored answer belongs to the sender of its request: the same key, path
//! and body from another API key, visitor or client is refused, never
//! answered with what the first sender was given.

use std::net::{IpAddr, Ipv4Addr};

use serde_json::json;
use supportdesk::auth::{Mode, Scope, ScopeSet};

use super::{count, post_keyed};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestResponse};

backend_tests!(
    another_key_replaying_an_admins_new_key_is_refused,
    another_visitor_replaying_an_upload_is_refused,
    another_client_replaying_a_chat_start_is_refused,
);

async fn another_key_replaying_an_admins_new_key_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let body = json!({"name": "ops", "scopes": ["tickets:write"]});
    let first = post_keyed(&app, "/api-keys", &acme.key, "new-key", &body).await;
    assert_eq!(first.status, 201, "{}", first.text);

    let limited = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::from_scopes([Scope::ApiKeysWrite]),
        )
        .await;
    post_keyed(&app, "/api-keys", &limited, "new-key", &body)
        .await
        .assert_error(422, "idempotency_key_reused");
}

async fn another_visitor_replaying_an_upload_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (_, zoe) = crate::csat::open_chat(&app, &acme).await;
    let (_, mallory) = crate::csat::open_chat(&app, &acme).await;
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0".to_vec();
    let upload = |token: &str| {
        app.client
            .post(app.url("/widget/v1/attachments?filename=shot.png"))
            .header("Authorization", format!("Bearer {token}"))
            .header("Idempotency-Key", "shot-1")
            .body(png.clone())
            .send()
    };
    let first = TestResponse::from(upload(&zoe).await).await;
    assert_eq!(first.status, 201, "{}", first.text);

    TestResponse::from(upload(&mallory).await)
        .await
        .assert_error(422, "idempotency_key_reused");
}

/// A chat start carries no credential of its visitor: it is the client's
/// address that owns the answer (and the visitor token in it).
async fn another_client_replaying_a_chat_start_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let body = json!({"widgetKey": acme.entity.widget_key_test, "visitorName": "Vic"});
    let start = |client: &reqwest::Client| {
        client
            .post(app.url("/widget/v1/sessions"))
            .header("Idempotency-Key", "chat-1")
            .json(&body)
            .send()
    };
    let first = TestResponse::from(start(&app.client).await).await;
    assert_eq!(first.status, 201, "{}", first.text);

    // Another address of the loopback network: another client.
    let elsewhere = reqwest::Client::builder()
        .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)))
        .build()
        .expect("a client");
    TestResponse::from(start(&elsewhere).await)
        .await
        .assert_error(422, "idempotency_key_reused");
    assert_eq!(count(&app, "chat_sessions", acme.company.id, "").await, 1);
}
