//! What the periodic re-check of socket credentials closes by itself, with
//! no notice to act on: a verified visitor's socket once the grace period
//! of the identity secret that vouched for it has run out (the node's
//! clock), and a visitor socket whose session's token nonce moved on
//! (tokens revoked) when no node was told. The re-check is the guard
//! behind the notices: a visitor's frames do not read the nonce again.

use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;
use uuid::Uuid;

use super::links::{rotate, verified_chat};
use super::{start_chat, text};
use crate::backend_tests;
use crate::chat::client::Client;
use crate::chat::credentials::post_message;
use crate::chat::{id_of, tenant};
use crate::support::{Backend, TestApp};

backend_tests!(
    a_verified_visitors_socket_closes_when_its_secrets_grace_runs_out,
    a_visitor_socket_of_an_older_nonce_is_closed_by_the_recheck,
);

/// A few re-check intervals (`realtime::RECHECK_INTERVAL`, 5 s), with room
/// for a loaded machine.
const RECHECK_BOUND: Duration = Duration::from_secs(15);
/// The grace the second secret gives the first.
const GRACE_SECS: u64 = 60;

async fn a_verified_visitors_socket_closes_when_its_secrets_grace_runs_out(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let secret = rotate(&app, &acme, 0).await;
    let chat = verified_chat(&app, &acme, &secret, "cust-1").await;
    let session = id_of(&chat);
    let mut socket = Client::token(&app, text(&chat, "visitorToken")).await;
    socket.subscribe(&format!("session:{session}")).await;
    rotate(&app, &acme, GRACE_SECS).await;
    // Within the grace the socket stays open: a message posted now reaches it.
    post_message(&app, &acme, &session).await;
    socket.next_of("chat.message").await;

    app.state
        .clock
        .advance(chrono::Duration::seconds(GRACE_SECS as i64 + 1));

    let closed = socket
        .closed_after_any_by(Instant::now() + RECHECK_BOUND)
        .await;
    assert_eq!(closed, (4401, "identity secret rotated".to_string()));
}

async fn a_visitor_socket_of_an_older_nonce_is_closed_by_the_recheck(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let chat = start_chat(&app, &acme.entity.widget_key_test, json!({})).await;
    let session = id_of(&chat);
    let mut socket = Client::token(&app, text(&chat, "visitorToken")).await;
    socket.subscribe(&format!("session:{session}")).await;

    // The nonce moves on as a revocation moves it, but no notice is sent
    // (one lost on the bus, say).
    let id = Uuid::parse_str(&session).expect("session id");
    supportdesk::widget::store::revoke_tokens(&app.state.db, &tenant(&acme), id)
        .await
        .expect("tokens revoked")
        .expect("the session");

    let closed = socket.closed_by(Instant::now() + RECHECK_BOUND).await;
    assert_eq!(closed, (4401, "visitor token revoked".to_string()));
}
