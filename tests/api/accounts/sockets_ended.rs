//! A deactivation or a role change ends every session of the user and
//! closes their sockets on every node, within the bound keys meet.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::{agent_with_password, sign_in};
use crate::backend_tests;
use crate::chat::client::Client;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_deactivation_ends_the_users_sessions,
    a_deactivation_closes_the_users_sockets_on_every_node,
    a_role_change_closes_the_users_sockets_on_every_node,
);

/// Node A, a peer node B, Ada (an agent) signed in on A with a socket open
/// on B; `change` applied to her user by the company's key on A. The socket
/// and the browser, after the change.
async fn changed(
    backend: Backend,
    change: Value,
) -> (TestApp, TestApp, Client, super::Browser, Instant) {
    let node_a = TestApp::spawn(backend).await;
    let node_b = node_a.spawn_peer().await;
    let acme = node_a.company().await;
    let ada = agent_with_password(&node_a, &acme, "ada@example.com", "agent").await;
    let browser = sign_in(&node_a, "ada@example.com", "live").await;
    let socket = Client::try_with_headers(
        &node_b,
        &[("Cookie", &browser.cookie), ("Origin", &node_b.address)],
    )
    .await
    .expect("socket opens");
    node_a
        .patch(&format!("/users/{ada}"), &acme.key, change)
        .await
        .assert_status(200);
    let at = Instant::now();
    (node_a, node_b, socket, browser, at)
}

async fn a_deactivation_ends_the_users_sessions(backend: Backend) {
    let (node_a, _node_b, _socket, browser, _) = changed(backend, json!({"isActive": false})).await;

    browser
        .get(&node_a, "/api/v1/auth/me")
        .await
        .assert_error(401, "session_expired");
}

async fn a_deactivation_closes_the_users_sockets_on_every_node(backend: Backend) {
    let (_node_a, _node_b, mut socket, _, at) = changed(backend, json!({"isActive": false})).await;

    let closed = socket.closed_by(at + Duration::from_secs(10)).await;

    assert_eq!(closed, (4401, "session ended".to_owned()));
}

async fn a_role_change_closes_the_users_sockets_on_every_node(backend: Backend) {
    let (_node_a, _node_b, mut socket, _, at) =
        changed(backend, json!({"roleName": "viewer"})).await;

    let closed = socket.closed_by(at + Duration::from_secs(10)).await;

    assert_eq!(closed, (4401, "session ended".to_owned()));
}
