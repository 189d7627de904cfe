//! ID tokens a correct provider never issues, from tests/oidc/fake.mjs: the
//! client id a company is configured with picks what is wrong with the
//! token (`good` shows the fake itself passes, so each refusal is for the
//! one thing its token has wrong).

use serde_json::json;

use super::browser::Browser;
use super::provider::{Issuer, configure, settings};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestResponse};

backend_tests!(
    a_correct_token_of_the_fake_issuer_signs_in,
    a_token_for_another_audience_is_refused,
    a_token_from_another_issuer_is_refused,
    an_expired_token_is_refused,
    an_unsigned_token_is_refused,
    a_token_signed_by_another_key_is_refused,
    a_replayed_nonce_is_refused,
);

/// One sign-in through the fake issuer whose client id is `mode`.
async fn sign_in(app: &TestApp, issuer: &Issuer, mode: &str) -> TestResponse {
    let slug = configured(app, issuer, mode).await;
    sign_in_at(app, &slug).await
}

/// A company whose SSO is the fake issuer as client `mode`: its slug.
pub(super) async fn configured(app: &TestApp, issuer: &Issuer, mode: &str) -> String {
    let company = app.company().await;
    let slug = format!("acme-{}", mode.replace('_', "-"));
    configure(
        app,
        &company,
        settings(&slug, &issuer.url, mode),
        json!({"jitEnabled": true}),
    )
    .await;
    slug
}

pub(super) async fn sign_in_at(app: &TestApp, slug: &str) -> TestResponse {
    let mut browser = Browser::new();
    let callback = browser.through_provider(app, slug, "unused").await;
    browser.visit(&callback).await
}

#[track_caller]
fn assert_refused(r: &TestResponse, reason: &str) {
    r.assert_error(401, "sso_failed");
    let message = r.body["error"].as_str().unwrap_or_default();
    assert!(message.contains(reason), "{reason:?} in {}", r.text);
}

async fn a_correct_token_of_the_fake_issuer_signs_in(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let issuer = Issuer::fake().await;

    let r = sign_in(&app, &issuer, "good").await;

    assert_eq!(r.assert_status(200)["user"]["email"], "sso.fake@acme.test");
}

async fn a_token_for_another_audience_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let issuer = Issuer::fake().await;

    let r = sign_in(&app, &issuer, "wrong_aud").await;

    assert_refused(&r, "Invalid audiences");
}

async fn a_token_from_another_issuer_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let issuer = Issuer::fake().await;

    let r = sign_in(&app, &issuer, "wrong_iss").await;

    assert_refused(&r, "Invalid issuer");
}

async fn an_expired_token_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let issuer = Issuer::fake().await;

    let r = sign_in(&app, &issuer, "expired").await;

    assert_refused(&r, "Expired");
}

async fn an_unsigned_token_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let issuer = Issuer::fake().await;

    let r = sign_in(&app, &issuer, "alg_none").await;

    assert_refused(&r, "ID token was refused");
}

async fn a_token_signed_by_another_key_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let issuer = Issuer::fake().await;

    let r = sign_in(&app, &issuer, "wrong_key").await;

    assert_refused(&r, "Signature verification failed");
}

async fn a_replayed_nonce_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let issuer = Issuer::fake().await;
    let slug = configured(&app, &issuer, "stale_nonce").await;
    // The fake's first sign-in carries its own nonce and passes…
    sign_in_at(&app, &slug).await.assert_status(200);

    // …every later one carries that first nonce again.
    let r = sign_in_at(&app, &slug).await;

    assert_refused(&r, "Invalid nonce");
}
