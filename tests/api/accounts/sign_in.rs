//! Signing in with email and password: the cookie, what it authenticates,
//! CSRF, and answers that tell an unknown email from a wrong password apart
//! in nothing.

use reqwest::Method;
use serde_json::json;

use super::{PASSWORD, agent_with_password, login_with, session_pair, sign_in};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    sign_in_answers_the_agent_and_a_cookie_with_its_flags,
    the_cookie_is_secure_when_the_service_is_reached_over_https,
    an_unknown_email_and_a_wrong_password_get_the_same_answer,
    the_cookie_authenticates_api_requests_with_the_role_scopes,
    a_change_made_with_the_cookie_needs_the_csrf_token,
    a_change_with_a_wrong_csrf_token_is_refused,
    signing_in_again_gives_a_new_session_and_ends_the_old_one,
    a_test_mode_session_sees_test_data_only,
    an_agent_role_has_no_admin_scopes,
);

async fn sign_in_answers_the_agent_and_a_cookie_with_its_flags(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ada = agent_with_password(&app, &acme, "ada@example.com", "agent").await;

    let response = login_with(
        &app,
        json!({"email": "ADA@example.com", "password": PASSWORD}),
        None,
    )
    .await;

    let body = response.assert_status(200);
    assert_eq!(body["user"]["id"], ada.to_string());
    assert_eq!(body["type"], "LIVE");
    assert!(body["csrfToken"].as_str().is_some_and(|t| t.len() >= 32));
    let cookie = response.header("set-cookie").expect("Set-Cookie");
    let attributes: Vec<&str> = cookie.split(';').map(str::trim).skip(1).collect();
    assert_eq!(
        attributes,
        ["Path=/", "HttpOnly", "SameSite=Lax", "Max-Age=1209600"],
        "{cookie}"
    );
}

async fn the_cookie_is_secure_when_the_service_is_reached_over_https(backend: Backend) {
    let app = TestApp::spawn_with(backend, |config| {
        config.public_url = Some("https://desk.example.com".into());
    })
    .await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;

    let response = login_with(
        &app,
        json!({"email": "ada@example.com", "password": PASSWORD}),
        None,
    )
    .await;

    response.assert_status(200);
    let cookie = response.header("set-cookie").expect("Set-Cookie");
    assert!(cookie.ends_with("; Secure"), "{cookie}");
}

async fn an_unknown_email_and_a_wrong_password_get_the_same_answer(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;

    let wrong_password = login_with(
        &app,
        json!({"email": "ada@example.com", "password": "not the password"}),
        None,
    )
    .await;
    let unknown_email = login_with(
        &app,
        json!({"email": "nobody@example.com", "password": "not the password"}),
        None,
    )
    .await;

    wrong_password.assert_error(401, "invalid_credentials");
    assert_eq!(
        (wrong_password.status, &wrong_password.body),
        (unknown_email.status, &unknown_email.body)
    );
}

async fn the_cookie_authenticates_api_requests_with_the_role_scopes(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let ada = sign_in(&app, "ada@example.com", "live").await;

    let tickets = ada.get(&app, "/api/v1/tickets").await;

    tickets.assert_status(200);
    assert!(tickets.header("x-ratelimit-limit").is_some());
}

async fn a_change_made_with_the_cookie_needs_the_csrf_token(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let ada = sign_in(&app, "ada@example.com", "live").await;
    let ticket = json!({"subject": "Printer", "entityId": acme.entity.id});

    let without = ada
        .send(
            &app,
            Method::POST,
            "/api/v1/tickets",
            Some(ticket.clone()),
            false,
        )
        .await;
    let with = ada
        .send(&app, Method::POST, "/api/v1/tickets", Some(ticket), true)
        .await;

    without.assert_error(403, "csrf_failed");
    with.assert_status(201);
}

async fn a_change_with_a_wrong_csrf_token_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let mut ada = sign_in(&app, "ada@example.com", "live").await;
    ada.csrf = "x".repeat(32);

    let response = ada
        .send(&app, Method::POST, "/api/v1/auth/logout", None, true)
        .await;

    response.assert_error(403, "csrf_failed");
}

async fn signing_in_again_gives_a_new_session_and_ends_the_old_one(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let first = sign_in(&app, "ada@example.com", "live").await;

    let again = login_with(
        &app,
        json!({"email": "ada@example.com", "password": PASSWORD}),
        Some(&first.cookie),
    )
    .await;

    again.assert_status(200);
    assert_ne!(session_pair(&again), first.cookie);
    assert_ne!(again.body["sessionId"], first.me["sessionId"]);
    first
        .get(&app, "/api/v1/auth/me")
        .await
        .assert_error(401, "session_expired");
}

async fn a_test_mode_session_sees_test_data_only(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let ticket = json!({"subject": "Test data", "entityId": acme.entity.id});
    app.post("/tickets", &acme.key, ticket)
        .await
        .assert_status(201);

    let live = sign_in(&app, "ada@example.com", "live").await;
    let test = sign_in(&app, "ada@example.com", "test").await;

    let in_live = live.get(&app, "/api/v1/tickets").await;
    let in_test = test.get(&app, "/api/v1/tickets").await;
    assert_eq!(in_live.assert_status(200)["total"], 0);
    assert_eq!(in_test.assert_status(200)["total"], 1);
}

async fn an_agent_role_has_no_admin_scopes(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let ada = sign_in(&app, "ada@example.com", "live").await;

    let keys = ada.get(&app, "/api/v1/api-keys").await;

    keys.assert_error(403, "insufficient_scope");
}
