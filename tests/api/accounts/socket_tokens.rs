//! Socket tokens minted by an agent signed in with the session cookie: the
//! token opens a socket with the session's rights, and only while the
//! session is open (as a key's token works only while the key does).

use std::time::Duration;

use reqwest::Method;
use serde_json::json;
use tokio::time::Instant;

use super::{Browser, agent_with_password, sign_in};
use crate::backend_tests;
use crate::chat::client::Client;
use crate::support::{Backend, TestApp};

backend_tests!(
    an_agents_session_mints_a_socket_token_that_opens_a_socket,
    a_socket_token_of_an_ended_session_is_refused,
    signing_out_closes_the_socket_a_sessions_token_opened,
);

/// Ada (an agent) signed in, and a socket token minted with her cookie.
async fn minted(app: &TestApp) -> (Browser, String) {
    let acme = app.company().await;
    agent_with_password(app, &acme, "ada@example.com", "agent").await;
    let ada = sign_in(app, "ada@example.com", "live").await;
    let response = ada
        .send(app, Method::POST, "/api/v1/ws/tokens", None, true)
        .await;
    let token = response.assert_status(201)["token"]
        .as_str()
        .expect("token")
        .to_owned();
    (ada, token)
}

async fn an_agents_session_mints_a_socket_token_that_opens_a_socket(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (_ada, token) = minted(&app).await;

    let mut socket = Client::try_connect(&app, None, Some(&token))
        .await
        .expect("socket opens");

    socket.send(json!({"type": "ping"})).await;
    assert_eq!(socket.next().await["type"], "pong");
}

async fn a_socket_token_of_an_ended_session_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (ada, token) = minted(&app).await;
    ada.send(&app, Method::POST, "/api/v1/auth/logout", None, true)
        .await
        .assert_status(204);

    let refused = Client::try_connect(&app, None, Some(&token)).await;

    let error = refused.err().expect("the handshake is refused").to_string();
    assert!(error.contains("401"), "{error}");
}

async fn signing_out_closes_the_socket_a_sessions_token_opened(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (ada, token) = minted(&app).await;
    let mut socket = Client::token(&app, &token).await;

    ada.send(&app, Method::POST, "/api/v1/auth/logout", None, true)
        .await
        .assert_status(204);

    let closed = socket
        .closed_by(Instant::now() + Duration::from_secs(10))
        .await;
    assert_eq!(closed, (4401, "session ended".to_owned()));
}
