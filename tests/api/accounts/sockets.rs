//! Sockets opened with the session cookie: only from the service's own
//! origin, and closed on every node when the session ends.

use std::time::Duration;

use reqwest::Method;
use serde_json::json;
use tokio::time::Instant;

use super::{Browser, PASSWORD, agent_with_password, sign_in};
use crate::backend_tests;
use crate::chat::client::Client;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_socket_opens_with_the_cookie_from_the_services_origin,
    a_socket_with_the_cookie_from_another_origin_is_refused,
    a_password_change_closes_the_other_sessions_sockets_on_every_node,
    signing_out_closes_the_sessions_socket,
);

async fn open(app: &TestApp, browser: &Browser, origin: &str) -> Result<Client, String> {
    Client::try_with_headers(app, &[("Cookie", &browser.cookie), ("Origin", origin)])
        .await
        .map_err(|error| error.to_string())
}

async fn a_socket_opens_with_the_cookie_from_the_services_origin(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let ada = sign_in(&app, "ada@example.com", "live").await;

    let mut socket = open(&app, &ada, &app.address).await.expect("socket opens");

    socket.send(json!({"type": "ping"})).await;
    assert_eq!(socket.next().await["type"], "pong");
}

async fn a_socket_with_the_cookie_from_another_origin_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let ada = sign_in(&app, "ada@example.com", "live").await;

    let refused = open(&app, &ada, "https://evil.example").await;

    let error = refused.err().expect("the handshake is refused");
    assert!(error.contains("403"), "{error}");
}

async fn a_password_change_closes_the_other_sessions_sockets_on_every_node(backend: Backend) {
    let node_a = TestApp::spawn(backend).await;
    let node_b = node_a.spawn_peer().await;
    let acme = node_a.company().await;
    agent_with_password(&node_a, &acme, "ada@example.com", "agent").await;
    let laptop = sign_in(&node_a, "ada@example.com", "live").await;
    let phone = sign_in(&node_a, "ada@example.com", "live").await;
    let mut phone_socket = open(&node_b, &phone, &node_b.address)
        .await
        .expect("socket opens");
    let mut laptop_socket = open(&node_b, &laptop, &node_b.address)
        .await
        .expect("socket opens");

    laptop
        .send(
            &node_a,
            Method::POST,
            "/api/v1/auth/password",
            Some(json!({"currentPassword": PASSWORD, "newPassword": "another long passphrase"})),
            true,
        )
        .await
        .assert_status(204);
    let changed = Instant::now();

    let closed = phone_socket
        .closed_by(changed + Duration::from_secs(10))
        .await;
    assert_eq!(closed, (4401, "session ended".to_owned()));
    phone
        .get(&node_a, "/api/v1/tickets")
        .await
        .assert_error(401, "session_expired");
    laptop_socket.send(json!({"type": "ping"})).await;
    assert_eq!(laptop_socket.next().await["type"], "pong");
}

async fn signing_out_closes_the_sessions_socket(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    let ada = sign_in(&app, "ada@example.com", "live").await;
    let mut socket = open(&app, &ada, &app.address).await.expect("socket opens");

    ada.send(&app, Method::POST, "/api/v1/auth/logout", None, true)
        .await
        .assert_status(204);

    let closed = socket
        .closed_by(Instant::now() + Duration::from_secs(10))
        .await;
    assert_eq!(closed.0, 4401);
}
