//! The second factor: setting TOTP up, signing in with a code (each code
//! once), recovery codes, and turning it off.

use reqwest::Method;
use serde_json::{Value, json};
use totp_rs::{Algorithm, Secret};

use super::{Browser, PASSWORD, agent_with_password, login_with, sign_in};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    an_account_with_totp_needs_a_code_to_sign_in,
    a_current_code_signs_in_once,
    a_wrong_code_is_refused,
    a_recovery_code_signs_in_once,
    confirming_with_a_wrong_code_leaves_totp_off,
    turning_totp_on_ends_the_other_sessions,
    turning_totp_off_needs_a_code,
    a_company_that_requires_totp_lets_an_agent_without_it_only_set_it_up,
);

/// The code of base32 `secret` at the app's clock.
pub(crate) fn code(app: &TestApp, secret: &str) -> String {
    let secret = Secret::try_from_base32(secret).expect("base32");
    let totp = totp_rs::Builder::new()
        .with_algorithm(Algorithm::SHA1)
        .with_secret(secret)
        .build()
        .expect("totp");
    let unix = u64::try_from(app.state.clock.now().0.timestamp()).expect("after 1970");
    totp.generate(unix).to_string()
}

/// Turns TOTP on for the signed-in `browser`, which then holds the fresh
/// session the confirmation answers; the secret and the recovery codes.
pub(crate) async fn turn_on(app: &TestApp, browser: &mut Browser) -> (String, Vec<String>) {
    let setup = browser
        .send(app, Method::POST, "/api/v1/auth/totp/setup", None, true)
        .await;
    let secret = setup.assert_status(200)["secret"]
        .as_str()
        .expect("secret")
        .to_owned();
    assert!(
        setup.body["otpauthUrl"]
            .as_str()
            .is_some_and(|url| url.starts_with("otpauth://totp/"))
    );
    let confirmed = browser
        .send(
            app,
            Method::POST,
            "/api/v1/auth/totp/confirm",
            Some(json!({"code": code(app, &secret)})),
            true,
        )
        .await;
    let codes = confirmed.assert_status(200)["recoveryCodes"]
        .as_array()
        .expect("recovery codes")
        .iter()
        .map(|c| c.as_str().expect("code").to_owned())
        .collect();
    browser.cookie = super::session_pair(&confirmed);
    browser.csrf = confirmed.body["csrfToken"]
        .as_str()
        .expect("csrfToken")
        .to_owned();
    // The confirmation used this step's code: sign-ins use the next one.
    app.state.clock.advance(chrono::TimeDelta::seconds(30));
    (secret, codes)
}

pub(crate) async fn with_totp(app: &TestApp) -> (String, Vec<String>) {
    let acme = app.company().await;
    agent_with_password(app, &acme, "ada@example.com", "agent").await;
    let mut ada = sign_in(app, "ada@example.com", "live").await;
    turn_on(app, &mut ada).await
}

pub(crate) fn login(totp: Option<&str>) -> Value {
    match totp {
        Some(totp) => json!({"email": "ada@example.com", "password": PASSWORD, "totp": totp}),
        None => json!({"email": "ada@example.com", "password": PASSWORD}),
    }
}

async fn an_account_with_totp_needs_a_code_to_sign_in(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    with_totp(&app).await;

    let without = login_with(&app, login(None), None).await;

    without.assert_error(401, "totp_required");
}

async fn a_current_code_signs_in_once(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (secret, _) = with_totp(&app).await;
    let current = code(&app, &secret);

    let first = login_with(&app, login(Some(&current)), None).await;
    let replayed = login_with(&app, login(Some(&current)), None).await;

    first.assert_status(200);
    replayed.assert_error(401, "invalid_credentials");
}

async fn a_wrong_code_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (secret, _) = with_totp(&app).await;
    let current: u32 = code(&app, &secret).parse().expect("digits");
    let wrong = format!("{:06}", (current + 1) % 1_000_000);

    let refused = login_with(&app, login(Some(&wrong)), None).await;

    refused.assert_error(401, "invalid_credentials");
}

async fn a_recovery_code_signs_in_once(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (_, codes) = with_totp(&app).await;
    assert_eq!(codes.len(), 10);

    let first = login_with(&app, login(Some(&codes[3])), None).await;
    let again = login_with(&app, login(Some(&codes[3])), None).await;

    first.assert_status(200);
    again.assert_error(401, "invalid_credentials");
}

async fn confirming_with_a_wrong_code_leaves_totp_off(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let ada = sign_in(&app, "ada@example.com", "live").await;
    ada.send(&app, Method::POST, "/api/v1/auth/totp/setup", None, true)
        .await
        .assert_status(200);

    let refused = ada
        .send(
            &app,
            Method::POST,
            "/api/v1/auth/totp/confirm",
            Some(json!({"code": "000000x"})),
            true,
        )
        .await;

    crate::support::assert_invalid(&refused, &["code"]);
    login_with(&app, login(None), None).await.assert_status(200);
}

async fn turning_totp_on_ends_the_other_sessions(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let mut laptop = sign_in(&app, "ada@example.com", "live").await;
    let phone = sign_in(&app, "ada@example.com", "live").await;

    turn_on(&app, &mut laptop).await;

    phone
        .get(&app, "/api/v1/tickets")
        .await
        .assert_error(401, "session_expired");
    laptop.get(&app, "/api/v1/tickets").await.assert_status(200);
}

async fn turning_totp_off_needs_a_code(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let mut ada = sign_in(&app, "ada@example.com", "live").await;
    let (secret, _) = turn_on(&app, &mut ada).await;
    let off = |code: &str| json!({"code": code});

    let refused = ada
        .send(
            &app,
            Method::DELETE,
            "/api/v1/auth/totp",
            Some(off("123")),
            true,
        )
        .await;
    let done = ada
        .send(
            &app,
            Method::DELETE,
            "/api/v1/auth/totp",
            Some(off(&code(&app, &secret))),
            true,
        )
        .await;

    crate::support::assert_invalid(&refused, &["code"]);
    done.assert_status(204);
    login_with(&app, login(None), None).await.assert_status(200);
}

async fn a_company_that_requires_totp_lets_an_agent_without_it_only_set_it_up(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    app.patch("/settings", &acme.key, json!({"requireTwoFactor": true}))
        .await
        .assert_status(200);
    let mut ada = sign_in(&app, "ada@example.com", "live").await;
    assert_eq!(ada.me["twoFactorSetupRequired"], true);
    ada.get(&app, "/api/v1/tickets")
        .await
        .assert_error(403, "insufficient_scope");

    turn_on(&app, &mut ada).await;

    ada.get(&app, "/api/v1/tickets").await.assert_status(200);
}
