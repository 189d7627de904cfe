//! An agent's sessions: who am I, which sessions are open, ending one or
//! all others, signing out, and the idle and absolute limits.

use reqwest::Method;
use serde_json::json;

use super::{agent_with_password, sign_in};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    me_names_the_agent_their_scopes_and_csrf_token,
    me_without_a_cookie_asks_to_sign_in,
    sessions_lists_the_open_sessions_and_marks_the_current_one,
    ending_one_session_signs_that_browser_out,
    ending_all_other_sessions_keeps_the_current_one,
    signing_out_ends_the_session_and_clears_the_cookie,
    an_idle_session_ends,
    a_session_ends_at_its_absolute_lifetime_however_busy,
    a_role_change_ends_the_users_sessions,
);

// Nodes hear of an ended session through Redis, which the Postgres runs have.
crate::postgres_tests!(a_password_change_ends_the_other_sessions_on_every_node_at_once);

async fn a_password_change_ends_the_other_sessions_on_every_node_at_once(backend: Backend) {
    let node_a = TestApp::spawn(backend).await;
    let node_b = node_a.spawn_peer().await;
    let acme = node_a.company().await;
    agent_with_password(&node_a, &acme, "ada@example.com", "agent").await;
    let laptop = sign_in(&node_a, "ada@example.com", "live").await;
    let phone = sign_in(&node_a, "ada@example.com", "live").await;
    // Node B has the phone's session in its cache.
    phone
        .get(&node_b, "/api/v1/tickets")
        .await
        .assert_status(200);

    let change =
        json!({"currentPassword": super::PASSWORD, "newPassword": "another long passphrase"});
    laptop
        .send(
            &node_a,
            Method::POST,
            "/api/v1/auth/password",
            Some(change),
            true,
        )
        .await
        .assert_status(204);

    // Well before node B's cache entry (10 s) would have expired.
    let within = std::time::Duration::from_secs(5);
    crate::support::eventually_within("node B forgets the phone's session", within, async || {
        phone.get(&node_b, "/api/v1/tickets").await.status == 401
    })
    .await;
    laptop
        .get(&node_b, "/api/v1/tickets")
        .await
        .assert_status(200);
}

async fn me_names_the_agent_their_scopes_and_csrf_token(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ada_id = agent_with_password(&app, &acme, "ada@example.com", "admin").await;
    let ada = sign_in(&app, "ada@example.com", "live").await;

    let me = ada.get(&app, "/api/v1/auth/me").await;

    let body = me.assert_status(200);
    assert_eq!(body["user"]["id"], ada_id.to_string());
    assert_eq!(body["user"]["email"], "ada@example.com");
    assert_eq!(body["csrfToken"], ada.csrf.as_str());
    assert!(
        body["scopes"]
            .as_array()
            .expect("scopes")
            .contains(&json!("api-keys:write"))
    );
    assert_eq!(me.header("cache-control"), Some("no-store"));
}

async fn me_without_a_cookie_asks_to_sign_in(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;

    let with_a_key = app.get("/auth/me", &acme.key).await;

    with_a_key.assert_error(401, "sign_in_required");
}

async fn sessions_lists_the_open_sessions_and_marks_the_current_one(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let laptop = sign_in(&app, "ada@example.com", "live").await;
    let phone = sign_in(&app, "ada@example.com", "live").await;

    let listed = laptop.get(&app, "/api/v1/auth/sessions").await;

    let data = listed.assert_status(200)["data"]
        .as_array()
        .expect("data")
        .clone();
    let ids: Vec<(&str, bool)> = data
        .iter()
        .map(|s| (s["id"].as_str().expect("id"), s["current"] == true))
        .collect();
    let laptop_id = laptop.me["sessionId"].as_str().expect("id");
    let phone_id = phone.me["sessionId"].as_str().expect("id");
    assert_eq!(ids, [(phone_id, false), (laptop_id, true)]);
    assert!(data[0]["lastSeenAt"].is_string());
    assert!(data[0]["ip"].as_str().is_some_and(|ip| ip == "127.0.0.1"));
}

async fn ending_one_session_signs_that_browser_out(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let laptop = sign_in(&app, "ada@example.com", "live").await;
    let phone = sign_in(&app, "ada@example.com", "live").await;
    let phone_id = phone.me["sessionId"].as_str().expect("id");

    let ended = laptop
        .send(
            &app,
            Method::DELETE,
            &format!("/api/v1/auth/sessions/{phone_id}"),
            None,
            true,
        )
        .await;

    ended.assert_status(204);
    phone
        .get(&app, "/api/v1/tickets")
        .await
        .assert_error(401, "session_expired");
    laptop.get(&app, "/api/v1/tickets").await.assert_status(200);
}

async fn ending_all_other_sessions_keeps_the_current_one(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let laptop = sign_in(&app, "ada@example.com", "live").await;
    let phone = sign_in(&app, "ada@example.com", "live").await;
    let tablet = sign_in(&app, "ada@example.com", "live").await;

    laptop
        .send(&app, Method::DELETE, "/api/v1/auth/sessions", None, true)
        .await
        .assert_status(204);

    for other in [&phone, &tablet] {
        other
            .get(&app, "/api/v1/tickets")
            .await
            .assert_error(401, "session_expired");
    }
    laptop.get(&app, "/api/v1/tickets").await.assert_status(200);
}

async fn signing_out_ends_the_session_and_clears_the_cookie(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let ada = sign_in(&app, "ada@example.com", "live").await;

    let out = ada
        .send(&app, Method::POST, "/api/v1/auth/logout", None, true)
        .await;

    out.assert_status(204);
    let cleared = out.header("set-cookie").expect("Set-Cookie");
    assert!(cleared.starts_with("sd_session=;"), "{cleared}");
    assert!(cleared.contains("Max-Age=0"), "{cleared}");
    ada.get(&app, "/api/v1/tickets")
        .await
        .assert_error(401, "session_expired");
}

async fn an_idle_session_ends(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let ada = sign_in(&app, "ada@example.com", "live").await;
    ada.get(&app, "/api/v1/tickets").await.assert_status(200);

    // Eight idle hours and the minute `lastSeenAt` may lag by.
    app.state.clock.advance(chrono::TimeDelta::minutes(480 + 2));
    app.state.access.sessions.clear();

    ada.get(&app, "/api/v1/tickets")
        .await
        .assert_error(401, "session_expired");
}

async fn a_session_ends_at_its_absolute_lifetime_however_busy(backend: Backend) {
    let app = TestApp::spawn_with(backend, |config| {
        config.session_max = std::time::Duration::from_secs(3 * 60 * 60);
    })
    .await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let ada = sign_in(&app, "ada@example.com", "live").await;

    for _ in 0..3 {
        app.state.clock.advance(chrono::TimeDelta::minutes(59));
        app.state.access.sessions.clear();
        ada.get(&app, "/api/v1/tickets").await.assert_status(200);
    }
    app.state.clock.advance(chrono::TimeDelta::minutes(4));

    ada.get(&app, "/api/v1/tickets")
        .await
        .assert_error(401, "session_expired");
}

async fn a_role_change_ends_the_users_sessions(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ada_id = agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let ada = sign_in(&app, "ada@example.com", "live").await;

    app.patch(
        &format!("/users/{ada_id}"),
        &acme.key,
        json!({"role": "ADMIN"}),
    )
    .await
    .assert_status(200);

    ada.get(&app, "/api/v1/tickets")
        .await
        .assert_error(401, "session_expired");
}
