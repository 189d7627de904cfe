//! Visitor token lifetimes: a token expires (the test clock moves, nobody
//! sleeps), the widget refreshes it while open, an agent can revoke a
//! session's tokens, and a closed chat's token stops writing after
//! `visitor_closed_write`.

use std::time::Duration;

use serde_json::{Value, json};

use super::{start_chat, text};
use crate::backend_tests;
use crate::chat::client::Client;
use crate::csat::{close_chat, rate};
use crate::support::{Backend, TestApp, TestCompany, TestResponse};

backend_tests!(
    a_visitor_token_expires_after_its_lifetime,
    an_expired_visitor_token_opens_no_socket,
    a_refreshed_token_outlives_the_one_it_replaced,
    an_expired_token_is_not_refreshed,
    revoked_tokens_stop_reading,
    revoked_tokens_open_no_socket,
    a_closed_chats_token_stops_writing_after_the_window,
    a_closed_chats_token_still_reads_after_the_window,
);

/// The default lifetime (docs/operations.md), one second past it.
fn past_lifetime() -> chrono::TimeDelta {
    chrono::TimeDelta::minutes(30) + chrono::TimeDelta::seconds(1)
}

pub async fn chat(app: &TestApp, acme: &TestCompany) -> (String, String) {
    let chat = start_chat(app, &acme.entity.widget_key_test, json!({})).await;
    (
        text(&chat, "id").to_string(),
        text(&chat, "visitorToken").to_string(),
    )
}

/// `GET /widget/v1/sessions/{id}` with `token`.
pub async fn read(app: &TestApp, id: &str, token: &str) -> TestResponse {
    let request = app
        .client
        .get(app.url(&format!("/widget/v1/sessions/{id}")))
        .header("Authorization", format!("Bearer {token}"));
    TestResponse::from(request.send().await).await
}

async fn refresh(app: &TestApp, token: &str) -> TestResponse {
    let request = app
        .client
        .post(app.url("/widget/v1/tokens/refresh"))
        .header("Authorization", format!("Bearer {token}"));
    TestResponse::from(request.send().await).await
}

async fn a_visitor_token_expires_after_its_lifetime(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (id, token) = chat(&app, &acme).await;
    read(&app, &id, &token).await.assert_status(200);

    app.state.clock.advance(past_lifetime());
    let expired = read(&app, &id, &token).await;
    expired.assert_error(401, "invalid_token");
    assert_eq!(expired.body["error"], "Visitor token has expired");
}

async fn an_expired_visitor_token_opens_no_socket(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (_, token) = chat(&app, &acme).await;

    app.state.clock.advance(past_lifetime());
    let refused = Client::try_connect(&app, None, Some(&token)).await;
    assert!(refused.is_err(), "an expired token opened a socket");
}

async fn a_refreshed_token_outlives_the_one_it_replaced(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (id, token) = chat(&app, &acme).await;

    app.state.clock.advance(chrono::TimeDelta::minutes(20));
    let fresh = refresh(&app, &token).await;
    let fresh = fresh.assert_status(200).clone();
    assert_eq!(fresh["sessionId"], id.as_str());
    let expires = text(&fresh, "visitorTokenExpiresAt");
    let expires = chrono::DateTime::parse_from_rfc3339(expires).expect("a timestamp");
    assert_eq!(
        expires.timestamp(),
        (app.state.clock.now().0 + chrono::TimeDelta::minutes(30)).timestamp()
    );

    // Past the first token's end, within the fresh one's.
    app.state.clock.advance(chrono::TimeDelta::minutes(15));
    read(&app, &id, &token)
        .await
        .assert_error(401, "invalid_token");
    read(&app, &id, text(&fresh, "visitorToken"))
        .await
        .assert_status(200);
}

async fn an_expired_token_is_not_refreshed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (_, token) = chat(&app, &acme).await;

    app.state.clock.advance(past_lifetime());
    refresh(&app, &token)
        .await
        .assert_error(401, "invalid_token");
}

async fn revoke(app: &TestApp, acme: &TestCompany, id: &str) {
    let path = format!("/chat/sessions/{id}/visitor-tokens/revoke");
    let r = app.post(&path, &acme.key, Value::Null).await;
    assert_eq!(r.status, 204, "{}", r.text);
}

async fn revoked_tokens_stop_reading(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (id, token) = chat(&app, &acme).await;
    let fresh = refresh(&app, &token).await;
    let fresh = text(fresh.assert_status(200), "visitorToken").to_string();

    revoke(&app, &acme, &id).await;
    for token in [&token, &fresh] {
        let refused = read(&app, &id, token).await;
        refused.assert_error(401, "invalid_token");
        assert_eq!(refused.body["error"], "Visitor token was revoked");
    }
}

async fn revoked_tokens_open_no_socket(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (id, token) = chat(&app, &acme).await;

    revoke(&app, &acme, &id).await;
    let refused = Client::try_connect(&app, None, Some(&token)).await;
    assert!(refused.is_err(), "a revoked token opened a socket");
}

fn short_write_window(config: &mut supportdesk::config::Config) {
    config.visitor_closed_write = Duration::from_secs(5 * 60);
}

async fn a_closed_chats_token_stops_writing_after_the_window(backend: Backend) {
    let app = TestApp::spawn_with(backend, short_write_window).await;
    let acme = app.company().await;
    let (id, token) = chat(&app, &acme).await;
    close_chat(&app, &acme, &id).await;

    app.state.clock.advance(chrono::TimeDelta::minutes(6));
    let late = rate(&app, Some(&token), json!({"score": 5})).await;
    late.assert_error(401, "invalid_token");
}

async fn a_closed_chats_token_still_reads_after_the_window(backend: Backend) {
    let app = TestApp::spawn_with(backend, short_write_window).await;
    let acme = app.company().await;
    let (id, token) = chat(&app, &acme).await;
    close_chat(&app, &acme, &id).await;
    rate(&app, Some(&token), json!({"score": 4}))
        .await
        .assert_status(201);

    app.state.clock.advance(chrono::TimeDelta::minutes(6));
    let read = read(&app, &id, &token).await;
    assert_eq!(read.assert_status(200)["status"], "CLOSED");
}
