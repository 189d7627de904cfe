//! The client behind a trusted proxy: its `X-Forwarded-For` names the
//! client whose per-IP limits apply, so two visitors behind one load
//! balancer get a chat start each; from a peer that is not trusted the
//! header is ignored, so a client cannot pose as another.

use super::*;
use supportdesk::config::{MessageRate, TrustedProxies};

backend_tests!(
    clients_behind_a_trusted_proxy_get_limits_of_their_own,
    a_forged_x_forwarded_for_is_ignored_without_trusted_proxies,
);

/// An app where one address may start one chat an hour, trusting the
/// proxies `trusted` (the tests connect from loopback).
async fn one_chat_per_address(backend: Backend, trusted: &str) -> TestApp {
    let trusted = TrustedProxies::parse(trusted).expect("trusted proxies");
    TestApp::spawn_with(backend, move |config| {
        config.widget_session_rate = MessageRate {
            limit: 1,
            window: std::time::Duration::from_secs(3600),
        };
        config.trusted_proxies = trusted;
    })
    .await
}

/// Starts a chat with `X-Forwarded-For: <forwarded>`.
async fn start_forwarded(app: &TestApp, widget_key: &str, forwarded: &str) -> TestResponse {
    TestResponse::from(
        app.client
            .post(app.url("/widget/v1/sessions"))
            .header("X-Forwarded-For", forwarded)
            .json(&json!({"widgetKey": widget_key}))
            .send()
            .await,
    )
    .await
}

async fn clients_behind_a_trusted_proxy_get_limits_of_their_own(backend: Backend) {
    let app = one_chat_per_address(backend, "127.0.0.0/8, ::1").await;
    let acme = app.company().await;
    let key = acme.entity.widget_key_test.clone();
    start_forwarded(&app, &key, "198.51.100.1")
        .await
        .assert_status(201);
    start_forwarded(&app, &key, "198.51.100.1")
        .await
        .assert_error(429, "rate_limited");
    // Another visitor behind the same balancer: a limit of its own.
    start_forwarded(&app, &key, "198.51.100.2")
        .await
        .assert_status(201);
}

async fn a_forged_x_forwarded_for_is_ignored_without_trusted_proxies(backend: Backend) {
    let app = one_chat_per_address(backend, "").await;
    let acme = app.company().await;
    let key = acme.entity.widget_key_test.clone();
    start_forwarded(&app, &key, "198.51.100.1")
        .await
        .assert_status(201);
    // The same peer naming another address is still the same client.
    start_forwarded(&app, &key, "198.51.100.2")
        .await
        .assert_error(429, "rate_limited");
}
