//! One-time links: invitations and password resets, and changing one's own
//! password.

use reqwest::Method;
use serde_json::json;

use super::{PASSWORD, agent_with_password, last_link_token, login_with, queued_emails, sign_in};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

const NEW_PASSWORD: &str = "a brand new passphrase";

backend_tests!(
    a_reset_is_accepted_alike_for_known_and_unknown_emails,
    a_reset_link_sets_a_new_password_and_ends_every_session,
    a_reset_link_works_once,
    a_reset_link_expires_after_an_hour,
    an_invitation_link_sets_the_first_password_and_signs_in,
    a_weak_password_is_refused_and_the_link_still_works,
    changing_ones_password_ends_the_other_sessions,
    changing_ones_password_needs_the_current_one,
);

async fn post(app: &TestApp, path: &str, body: serde_json::Value) -> crate::support::TestResponse {
    crate::support::TestResponse::from(app.client.post(app.url(path)).json(&body).send().await)
        .await
}

async fn a_reset_is_accepted_alike_for_known_and_unknown_emails(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;

    let known = post(
        &app,
        "/api/v1/auth/password-reset",
        json!({"email": "ada@example.com"}),
    )
    .await;
    let unknown = post(
        &app,
        "/api/v1/auth/password-reset",
        json!({"email": "no@example.com"}),
    )
    .await;

    assert_eq!((known.status, &known.text), (unknown.status, &unknown.text));
    assert_eq!(known.status, 202);
    let sent: Vec<_> = queued_emails(&app)
        .await
        .into_iter()
        .map(|e| e["to"].clone())
        .collect();
    assert_eq!(sent, [json!("ada@example.com")]);
}

async fn a_reset_link_sets_a_new_password_and_ends_every_session(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let before = sign_in(&app, "ada@example.com", "live").await;
    post(
        &app,
        "/api/v1/auth/password-reset",
        json!({"email": "ada@example.com"}),
    )
    .await;
    let token = last_link_token(&app, "ada@example.com").await;

    let confirmed = post(
        &app,
        "/api/v1/auth/password-reset/confirm",
        json!({"token": token, "password": NEW_PASSWORD}),
    )
    .await;

    confirmed.assert_status(204);
    before
        .get(&app, "/api/v1/tickets")
        .await
        .assert_error(401, "session_expired");
    let old = json!({"email": "ada@example.com", "password": PASSWORD});
    login_with(&app, old, None)
        .await
        .assert_error(401, "invalid_credentials");
    let new = json!({"email": "ada@example.com", "password": NEW_PASSWORD});
    login_with(&app, new, None).await.assert_status(200);
}

async fn a_reset_link_works_once(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    post(
        &app,
        "/api/v1/auth/password-reset",
        json!({"email": "ada@example.com"}),
    )
    .await;
    let token = last_link_token(&app, "ada@example.com").await;
    let body = json!({"token": token, "password": NEW_PASSWORD});
    post(&app, "/api/v1/auth/password-reset/confirm", body.clone())
        .await
        .assert_status(204);

    let again = post(&app, "/api/v1/auth/password-reset/confirm", body).await;

    again.assert_error(400, "invalid_link");
}

async fn a_reset_link_expires_after_an_hour(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    post(
        &app,
        "/api/v1/auth/password-reset",
        json!({"email": "ada@example.com"}),
    )
    .await;
    let token = last_link_token(&app, "ada@example.com").await;

    app.state.clock.advance(chrono::TimeDelta::minutes(61));
    let late = post(
        &app,
        "/api/v1/auth/password-reset/confirm",
        json!({"token": token, "password": NEW_PASSWORD}),
    )
    .await;

    late.assert_error(400, "invalid_link");
}

async fn an_invitation_link_sets_the_first_password_and_signs_in(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let created = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Bea", "email": "bea@example.com", "invite": true}),
        )
        .await;
    created.assert_status(201);
    let token = last_link_token(&app, "bea@example.com").await;

    let accepted = post(
        &app,
        "/api/v1/auth/invitations/accept",
        json!({"token": token, "password": NEW_PASSWORD, "name": "Beatrice"}),
    )
    .await;

    let body = accepted.assert_status(200);
    assert_eq!(body["user"]["name"], "Beatrice");
    assert!(
        accepted
            .header("set-cookie")
            .is_some_and(|c| c.starts_with("sd_session="))
    );
    let login = json!({"email": "bea@example.com", "password": NEW_PASSWORD});
    login_with(&app, login, None).await.assert_status(200);
}

async fn a_weak_password_is_refused_and_the_link_still_works(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    post(
        &app,
        "/api/v1/auth/password-reset",
        json!({"email": "ada@example.com"}),
    )
    .await;
    let token = last_link_token(&app, "ada@example.com").await;

    let weak = post(
        &app,
        "/api/v1/auth/password-reset/confirm",
        json!({"token": token, "password": "short"}),
    )
    .await;

    crate::support::assert_invalid(&weak, &["password"]);
    post(
        &app,
        "/api/v1/auth/password-reset/confirm",
        json!({"token": token, "password": NEW_PASSWORD}),
    )
    .await
    .assert_status(204);
}

async fn changing_ones_password_ends_the_other_sessions(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let laptop = sign_in(&app, "ada@example.com", "live").await;
    let phone = sign_in(&app, "ada@example.com", "live").await;

    laptop
        .send(
            &app,
            Method::POST,
            "/api/v1/auth/password",
            Some(json!({"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD})),
            true,
        )
        .await
        .assert_status(204);

    phone
        .get(&app, "/api/v1/tickets")
        .await
        .assert_error(401, "session_expired");
    laptop.get(&app, "/api/v1/tickets").await.assert_status(200);
}

async fn changing_ones_password_needs_the_current_one(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let ada = sign_in(&app, "ada@example.com", "live").await;

    let refused = ada
        .send(
            &app,
            Method::POST,
            "/api/v1/auth/password",
            Some(json!({"currentPassword": "wrong wrong wrong", "newPassword": NEW_PASSWORD})),
            true,
        )
        .await;

    refused.assert_error(401, "invalid_credentials");
    let old = json!({"email": "ada@example.com", "password": PASSWORD});
    login_with(&app, old, None).await.assert_status(200);
}
