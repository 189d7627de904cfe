//! Sign-ins: a success and a failure each write one entry naming the
//! account, with the request's address, user agent and request id.

use serde_json::json;

use super::only_entry;
use crate::accounts::{PASSWORD, agent_with_password, login_with, sign_in};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_sign_in_is_recorded_with_its_request,
    a_wrong_password_is_recorded_as_a_failed_sign_in,
    an_unknown_email_writes_no_entry,
);

async fn a_sign_in_is_recorded_with_its_request(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let user = agent_with_password(&app, &acme, "ada@acme.test", "admin").await;

    let browser = sign_in(&app, "ada@acme.test", "live").await;

    let entry = only_entry(&app, &acme, "auth.signed_in").await;
    assert_eq!(entry["actor"]["type"], "agent");
    assert_eq!(entry["actor"]["id"], user.to_string());
    assert_eq!(entry["target"], json!({"type": "user", "id": user}));
    assert_eq!(
        entry["changes"]["after"]["sessionId"],
        browser.me["sessionId"]
    );
    assert_eq!(entry["ip"], "127.0.0.1");
    assert!(
        entry["requestId"].as_str().is_some_and(|id| !id.is_empty()),
        "{entry}"
    );
}

async fn a_wrong_password_is_recorded_as_a_failed_sign_in(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let user = agent_with_password(&app, &acme, "ada@acme.test", "agent").await;

    let response = app
        .client
        .post(app.url("/api/v1/auth/login"))
        .header("User-Agent", "curl/8.0")
        .json(&json!({"email": "ada@acme.test", "password": format!("{PASSWORD}!")}))
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status().as_u16(), 401);

    let entry = only_entry(&app, &acme, "auth.sign_in_failed").await;
    assert_eq!(entry["actor"]["id"], user.to_string());
    assert_eq!(entry["target"], json!({"type": "user", "id": user}));
    assert_eq!(entry["changes"], json!({"reason": "password"}));
    assert_eq!(entry["userAgent"], "curl/8.0");
    assert_eq!(entry["ip"], "127.0.0.1");
}

async fn an_unknown_email_writes_no_entry(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;

    login_with(
        &app,
        json!({"email": "nobody@acme.test", "password": "x"}),
        None,
    )
    .await
    .assert_error(401, "invalid_credentials");

    assert!(
        super::entries_of(&app, &acme, "auth.sign_in_failed")
            .await
            .is_empty()
    );
}
