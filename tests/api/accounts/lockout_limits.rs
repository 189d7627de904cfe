//! The per-client limit on failed sign-ins (20, across accounts), and a
//! password reset lifting an account's lock-out.

use serde_json::json;

use super::{PASSWORD, agent_with_password, last_link_token, login_with};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestResponse};

backend_tests!(
    twenty_failures_from_one_client_lock_it_out,
    nineteen_failures_from_one_client_leave_it_free,
    a_reset_link_lifts_the_accounts_lock_out,
);

/// `times` failed sign-ins from this client, each for another unknown
/// email (so that no account reaches its own limit).
async fn fail_as_many_accounts(app: &TestApp, times: usize) {
    for n in 0..times {
        let wrong = json!({"email": format!("nobody{n}@example.com"), "password": "wrong"});
        login_with(app, wrong, None)
            .await
            .assert_error(401, "invalid_credentials");
    }
}

async fn right(app: &TestApp, password: &str) -> TestResponse {
    let body = json!({"email": "ada@example.com", "password": password});
    login_with(app, body, None).await
}

async fn post(app: &TestApp, path: &str, body: serde_json::Value) -> TestResponse {
    TestResponse::from(app.client.post(app.url(path)).json(&body).send().await).await
}

async fn twenty_failures_from_one_client_lock_it_out(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    fail_as_many_accounts(&app, 20).await;

    let locked = right(&app, PASSWORD).await;

    locked.assert_error(429, "rate_limited");
}

async fn nineteen_failures_from_one_client_leave_it_free(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    fail_as_many_accounts(&app, 19).await;

    let signed_in = right(&app, PASSWORD).await;

    signed_in.assert_status(200);
}

async fn a_reset_link_lifts_the_accounts_lock_out(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    for _ in 0..5 {
        right(&app, "wrong wrong wrong")
            .await
            .assert_error(401, "invalid_credentials");
    }
    right(&app, PASSWORD)
        .await
        .assert_error(429, "rate_limited");
    let reset = json!({"email": "ada@example.com"});
    post(&app, "/api/v1/auth/password-reset", reset)
        .await
        .assert_status(202);
    let token = last_link_token(&app, "ada@example.com").await;
    let new = "a brand new passphrase";
    post(
        &app,
        "/api/v1/auth/password-reset/confirm",
        json!({"token": token, "password": new}),
    )
    .await
    .assert_status(204);

    let signed_in = right(&app, new).await;

    signed_in.assert_status(200);
}
