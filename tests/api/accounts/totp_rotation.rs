//! Turning the second factor on is a privilege change (a company that
//! requires it gives the agent their scopes only then): the session the
//! request came with ends and the answer's cookie holds a fresh one.

use serde_json::json;

use super::totp::turn_on;
use super::{Browser, agent_with_password, sign_in};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    confirming_totp_ends_the_session_it_was_confirmed_with,
    confirming_totp_answers_a_fresh_session,
);

async fn confirming_totp_ends_the_session_it_was_confirmed_with(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    app.patch("/settings", &acme.key, json!({"requireTwoFactor": true}))
        .await
        .assert_status(200);
    let mut ada = sign_in(&app, "ada@example.com", "live").await;
    let before = Browser {
        cookie: ada.cookie.clone(),
        csrf: ada.csrf.clone(),
        me: ada.me.clone(),
    };

    turn_on(&app, &mut ada).await;

    before
        .get(&app, "/api/v1/auth/me")
        .await
        .assert_error(401, "session_expired");
}

async fn confirming_totp_answers_a_fresh_session(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let mut ada = sign_in(&app, "ada@example.com", "live").await;
    let old_id = ada.me["sessionId"].clone();

    turn_on(&app, &mut ada).await;

    let me = ada.get(&app, "/api/v1/auth/me").await;
    let fresh = me.assert_status(200)["sessionId"].clone();
    assert_ne!(fresh, old_id);
}
