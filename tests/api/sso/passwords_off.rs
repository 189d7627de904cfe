//! A company that turned passwords off once SSO worked: a correct password
//! is refused with 403 `sso_required` (a wrong one stays a plain 401, so
//! only who knows the password learns of it).

use serde_json::json;

use super::browser::Browser;
use super::provider::{CLIENT_ID, Issuer, configure, settings};
use crate::accounts::{PASSWORD, agent_with_password, login_with};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(a_correct_password_is_refused_once_passwords_are_off);

async fn a_correct_password_is_refused_once_passwords_are_off(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let company = app.company().await;
    agent_with_password(&app, &company, "ada@acme.test", "agent").await;
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
    app.put("/settings/sso", &company.key, off)
        .await
        .assert_status(200);

    let r = login_with(
        &app,
        json!({"email": "ada@acme.test", "password": PASSWORD}),
        None,
    )
    .await;

    r.assert_error(403, "sso_required");
}
