//! `GET/PUT /settings/sso`.

use serde_json::json;

use super::browser::Browser;
use super::provider::{CLIENT_ID, CLIENT_SECRET, Issuer, configure, settings};
use crate::backend_tests;
use crate::support::{Backend, TestApp, assert_invalid};

backend_tests!(
    the_configuration_reads_back_without_its_secret,
    no_configuration_is_not_found,
    a_slug_of_another_company_is_a_conflict,
    a_plain_http_issuer_off_this_machine_is_refused,
    the_first_configuration_needs_a_secret,
    passwords_stay_on_until_an_sso_sign_in_has_succeeded,
    passwords_can_be_turned_off_after_an_sso_sign_in,
    a_new_issuer_needs_a_new_sign_in_before_passwords_go_off,
    the_start_and_callback_need_no_api_key,
);

async fn the_configuration_reads_back_without_its_secret(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let company = app.company().await;
    configure(
        &app,
        &company,
        settings("acme", "https://login.acme.test", "client-1"),
        json!({"allowedEmailDomain": "Acme.Test", "jitEnabled": true}),
    )
    .await;

    let r = app.get("/settings/sso", &company.key).await;

    let body = r.assert_status(200);
    assert_eq!(
        body,
        &json!({
            "slug": "acme",
            "issuerUrl": "https://login.acme.test",
            "clientId": "client-1",
            "allowedEmailDomain": "acme.test",
            "jitEnabled": true,
            "jitRole": "agent",
            "passwordsDisabled": false,
            "verifiedAt": null,
            "createdAt": body["createdAt"],
            "updatedAt": body["updatedAt"],
            "callbackUrl": app.url("/api/v1/auth/sso/callback"),
            "startUrl": app.url("/api/v1/auth/sso/acme/start"),
        })
    );
    assert!(!r.text.contains(CLIENT_SECRET), "{}", r.text);
}

async fn no_configuration_is_not_found(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let company = app.company().await;

    let r = app.get("/settings/sso", &company.key).await;

    r.assert_error(404, "not_found");
}

async fn a_slug_of_another_company_is_a_conflict(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let first = app.company().await;
    let second = app.company().await;
    configure(
        &app,
        &first,
        settings("acme", "https://a.test", "a"),
        json!({}),
    )
    .await;

    let r = app
        .put(
            "/settings/sso",
            &second.key,
            settings("acme", "https://b.test", "b"),
        )
        .await;

    r.assert_error(409, "conflict");
}

async fn a_plain_http_issuer_off_this_machine_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let company = app.company().await;

    let r = app
        .put(
            "/settings/sso",
            &company.key,
            settings("acme", "http://login.acme.test", "client-1"),
        )
        .await;

    assert_invalid(&r, &["issuerUrl"]);
}

async fn the_first_configuration_needs_a_secret(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let company = app.company().await;

    let r = app
        .put(
            "/settings/sso",
            &company.key,
            json!({"slug": "acme", "issuerUrl": "https://a.test", "clientId": "a"}),
        )
        .await;

    assert_invalid(&r, &["clientSecret"]);
}

async fn passwords_stay_on_until_an_sso_sign_in_has_succeeded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let company = app.company().await;

    let mut body = settings("acme", "https://a.test", "a");
    body["passwordsDisabled"] = json!(true);
    let r = app.put("/settings/sso", &company.key, body).await;

    r.assert_error(409, "sso_not_verified");
}

async fn passwords_can_be_turned_off_after_an_sso_sign_in(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let company = app.company().await;
    let issuer = Issuer::real(&app).await;
    let body = settings("acme", &issuer.url, CLIENT_ID);
    configure(&app, &company, body.clone(), json!({"jitEnabled": true})).await;
    let mut browser = Browser::new();
    let callback = browser
        .through_provider(&app, "acme", "ann@acme.test")
        .await;
    browser.visit(&callback).await.assert_status(200);

    let mut off = body;
    off["jitEnabled"] = json!(true);
    off["passwordsDisabled"] = json!(true);
    let r = app.put("/settings/sso", &company.key, off).await;

    assert_eq!(
        r.assert_status(200)["passwordsDisabled"],
        true,
        "{}",
        r.text
    );
}

async fn a_new_issuer_needs_a_new_sign_in_before_passwords_go_off(backend: Backend) {
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

    let mut moved = settings("acme", "https://elsewhere.test", CLIENT_ID);
    moved["passwordsDisabled"] = json!(true);
    let r = app.put("/settings/sso", &company.key, moved).await;

    r.assert_error(409, "sso_not_verified");
}

async fn the_start_and_callback_need_no_api_key(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let company = app.company().await;
    configure(
        &app,
        &company,
        settings("acme", "https://a.test", "a"),
        json!({}),
    )
    .await;

    // No key: the callback answers with SSO's own refusal, not a key's.
    let r = Browser::new()
        .visit(&app.url("/api/v1/auth/sso/callback?state=x&code=y"))
        .await;

    r.assert_error(401, "sso_failed");
}
