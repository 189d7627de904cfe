//! An invitation link works once, and not after seven days.

use serde_json::{Value, json};

use super::last_link_token;
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestResponse};

backend_tests!(
    an_invitation_link_works_once,
    an_invitation_link_expires_after_seven_days,
);

/// Invites Bea by the company's key; the link's token.
async fn invited(app: &TestApp) -> String {
    let acme = app.company().await;
    app.post(
        "/users",
        &acme.key,
        json!({"name": "Bea", "email": "bea@example.com", "invite": true}),
    )
    .await
    .assert_status(201);
    last_link_token(app, "bea@example.com").await
}

async fn accept(app: &TestApp, token: &str, password: &str) -> TestResponse {
    let body: Value = json!({"token": token, "password": password});
    let request = app
        .client
        .post(app.url("/api/v1/auth/invitations/accept"))
        .json(&body);
    TestResponse::from(request.send().await).await
}

async fn an_invitation_link_works_once(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = invited(&app).await;
    accept(&app, &token, "a first passphrase")
        .await
        .assert_status(200);

    let again = accept(&app, &token, "a second passphrase").await;

    again.assert_error(400, "invalid_link");
}

async fn an_invitation_link_expires_after_seven_days(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = invited(&app).await;

    app.state
        .clock
        .advance(chrono::TimeDelta::days(7) + chrono::TimeDelta::minutes(1));
    let late = accept(&app, &token, "a first passphrase").await;

    late.assert_error(400, "invalid_link");
}
