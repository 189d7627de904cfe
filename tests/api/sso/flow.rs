//! Sign-ins through the real provider (`oidc-provider`).

use serde_json::json;

use super::browser::{Browser, with_param};
use super::provider::{CLIENT_ID, Issuer, configure, settings};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_known_user_signs_in,
    an_unknown_user_is_created_when_jit_is_on,
    an_unknown_user_is_refused_when_jit_is_off,
    an_email_outside_the_allowed_domain_is_refused,
    an_unverified_email_is_refused,
    a_wrong_state_is_refused,
    a_replayed_callback_is_refused,
    an_expired_sign_in_is_refused,
    an_unknown_slug_is_not_found,
);

async fn a_known_user_signs_in(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let company = app.company().await;
    let issuer = Issuer::real(&app).await;
    configure(
        &app,
        &company,
        settings("acme", &issuer.url, CLIENT_ID),
        json!({}),
    )
    .await;
    let user = app
        .post(
            "/users",
            &company.key,
            json!({"name": "Ann", "email": "Ann@Acme.test"}),
        )
        .await
        .assert_status(201)
        .clone();

    let mut browser = Browser::new();
    let callback = browser
        .through_provider(&app, "acme", "ann@acme.test")
        .await;
    let r = browser.visit(&callback).await;

    let body = r.assert_status(200);
    assert_eq!(body["user"]["id"], user["id"], "{}", r.text);
}

async fn an_unknown_user_is_created_when_jit_is_on(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let company = app.company().await;
    let issuer = Issuer::real(&app).await;
    configure(
        &app,
        &company,
        settings("acme", &issuer.url, CLIENT_ID),
        json!({"jitEnabled": true, "jitRole": "admin"}),
    )
    .await;

    let mut browser = Browser::new();
    let callback = browser
        .through_provider(&app, "acme", "new.agent@acme.test")
        .await;
    let r = browser.visit(&callback).await;

    let body = r.assert_status(200).clone();
    let user = app
        .get(
            &format!("/users/{}", body["user"]["id"].as_str().expect("id")),
            &company.key,
        )
        .await;
    let user = user.assert_status(200);
    assert_eq!(
        (user["email"].as_str(), user["role"].as_str()),
        (Some("new.agent@acme.test"), Some("ADMIN"))
    );
}

async fn an_unknown_user_is_refused_when_jit_is_off(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let company = app.company().await;
    let issuer = Issuer::real(&app).await;
    configure(
        &app,
        &company,
        settings("acme", &issuer.url, CLIENT_ID),
        json!({}),
    )
    .await;

    let mut browser = Browser::new();
    let callback = browser
        .through_provider(&app, "acme", "stranger@acme.test")
        .await;
    let r = browser.visit(&callback).await;

    r.assert_error(401, "sso_failed");
    let users = app.get("/users", &company.key).await;
    assert_eq!(users.assert_status(200)["total"], 0, "{}", users.text);
}

async fn an_email_outside_the_allowed_domain_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let company = app.company().await;
    let issuer = Issuer::real(&app).await;
    configure(
        &app,
        &company,
        settings("acme", &issuer.url, CLIENT_ID),
        json!({"jitEnabled": true, "allowedEmailDomain": "acme.test"}),
    )
    .await;

    let mut browser = Browser::new();
    let callback = browser
        .through_provider(&app, "acme", "eve@elsewhere.test")
        .await;
    let r = browser.visit(&callback).await;

    r.assert_error(401, "sso_failed");
    assert!(
        r.body["error"]
            .as_str()
            .is_some_and(|m| m.contains("acme.test")),
        "{}",
        r.text
    );
}

async fn an_unverified_email_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let company = app.company().await;
    let issuer = Issuer::real(&app).await;
    configure(
        &app,
        &company,
        settings("acme", &issuer.url, CLIENT_ID),
        json!({"jitEnabled": true}),
    )
    .await;

    let mut browser = Browser::new();
    let callback = browser
        .through_provider(&app, "acme", "unverified:carl@acme.test")
        .await;
    let r = browser.visit(&callback).await;

    r.assert_error(401, "sso_failed");
    assert!(
        r.body["error"]
            .as_str()
            .is_some_and(|m| m.contains("verified")),
        "{}",
        r.text
    );
}

async fn a_wrong_state_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let company = app.company().await;
    let issuer = Issuer::real(&app).await;
    configure(
        &app,
        &company,
        settings("acme", &issuer.url, CLIENT_ID),
        json!({"jitEnabled": true}),
    )
    .await;

    let mut browser = Browser::new();
    let callback = browser
        .through_provider(&app, "acme", "ann@acme.test")
        .await;
    let r = browser
        .visit(&with_param(&callback, "state", "forged-state"))
        .await;

    r.assert_error(401, "sso_failed");
    assert!(
        r.body["error"]
            .as_str()
            .is_some_and(|m| m.contains("unknown")),
        "{}",
        r.text
    );
}

async fn a_replayed_callback_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let company = app.company().await;
    let issuer = Issuer::real(&app).await;
    configure(
        &app,
        &company,
        settings("acme", &issuer.url, CLIENT_ID),
        json!({"jitEnabled": true}),
    )
    .await;
    let mut browser = Browser::new();
    let callback = browser
        .through_provider(&app, "acme", "ann@acme.test")
        .await;
    browser.visit(&callback).await.assert_status(200);

    // The same state, code and nonce once more.
    let r = browser.visit(&callback).await;

    r.assert_error(401, "sso_failed");
    assert!(
        r.body["error"]
            .as_str()
            .is_some_and(|m| m.contains("already used")),
        "{}",
        r.text
    );
}

async fn an_expired_sign_in_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let company = app.company().await;
    let issuer = Issuer::real(&app).await;
    configure(
        &app,
        &company,
        settings("acme", &issuer.url, CLIENT_ID),
        json!({"jitEnabled": true}),
    )
    .await;
    let mut browser = Browser::new();
    let callback = browser
        .through_provider(&app, "acme", "ann@acme.test")
        .await;

    app.state.clock.advance(chrono::TimeDelta::minutes(11));
    let r = browser.visit(&callback).await;

    r.assert_error(401, "sso_failed");
    assert!(
        r.body["error"]
            .as_str()
            .is_some_and(|m| m.contains("expired")),
        "{}",
        r.text
    );
}

async fn an_unknown_slug_is_not_found(backend: Backend) {
    let app = TestApp::spawn(backend).await;

    let r = crate::support::TestResponse::from(
        reqwest::Client::new()
            .get(app.url("/api/v1/auth/sso/nobody/start"))
            .send()
            .await,
    )
    .await;

    r.assert_error(404, "not_found");
}
