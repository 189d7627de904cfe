//! Brute force: failed sign-ins lock the account (and the client) out for
//! a while, with no password checked meanwhile; a success or a reset lifts
//! the count; with Redis every node counts together.

use serde_json::json;

use super::{PASSWORD, agent_with_password, login_with};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    five_failures_lock_the_account_out_even_for_the_right_password,
    the_lockout_ends_with_time,
    a_success_clears_the_failures,
);

// Nodes share the counts through Redis, which the Postgres runs have.
crate::postgres_tests!(failures_on_one_node_lock_the_account_on_another);

async fn fail(app: &TestApp, times: usize) {
    for _ in 0..times {
        let wrong = json!({"email": "ada@example.com", "password": "wrong wrong wrong"});
        login_with(app, wrong, None)
            .await
            .assert_error(401, "invalid_credentials");
    }
}

fn right() -> serde_json::Value {
    json!({"email": "ada@example.com", "password": PASSWORD})
}

async fn five_failures_lock_the_account_out_even_for_the_right_password(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    fail(&app, 5).await;

    let locked = login_with(&app, right(), None).await;

    locked.assert_error(429, "rate_limited");
    let retry: u64 = locked
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("seconds");
    assert!((1..=30).contains(&retry), "{retry}");
}

async fn the_lockout_ends_with_time(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    fail(&app, 5).await;

    app.state.clock.advance(chrono::TimeDelta::seconds(31));

    login_with(&app, right(), None).await.assert_status(200);
}

async fn a_success_clears_the_failures(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    fail(&app, 4).await;
    login_with(&app, right(), None).await.assert_status(200);

    fail(&app, 4).await;

    login_with(&app, right(), None).await.assert_status(200);
}

async fn failures_on_one_node_lock_the_account_on_another(backend: Backend) {
    let node_a = TestApp::spawn(backend).await;
    let node_b = node_a.spawn_peer().await;
    let acme = node_a.company().await;
    agent_with_password(&node_a, &acme, "ada@example.com", "agent").await;
    fail(&node_a, 5).await;

    let on_b = login_with(&node_b, right(), None).await;

    on_b.assert_error(429, "rate_limited");
}
