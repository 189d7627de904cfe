//! Open visitor sockets obey their token as key sockets obey their key:
//! revoking a session's visitor tokens, or rotating the identity secret
//! that verified the visitor without grace, closes the sockets already
//! open (4401, on the node that made the change and on another) before
//! anything posted after the change reaches them; other sessions' sockets
//! stay open.

use serde_json::{Value, json};
use tokio::time::Instant;

use super::links::{rotate, verified_chat};
use crate::backend_tests;
use crate::chat::client::Client;
use crate::chat::credentials::{assert_closed, open_visitor_sockets, post_message};
use crate::chat::id_of;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    revoking_a_sessions_tokens_closes_its_visitor_sockets_on_every_node,
    rotation_without_grace_closes_a_verified_visitors_sockets_on_every_node,
    revoking_a_sessions_tokens_leaves_another_sessions_socket_open,
);

async fn revoke(app: &TestApp, acme: &TestCompany, session: &str) {
    let path = format!("/chat/sessions/{session}/visitor-tokens/revoke");
    let r = app.post(&path, &acme.key, Value::Null).await;
    assert_eq!(r.status, 204, "{}", r.text);
}

async fn anonymous_chat(app: &TestApp, acme: &TestCompany) -> Value {
    super::start_chat(app, &acme.entity.widget_key_test, json!({})).await
}

async fn revoking_a_sessions_tokens_closes_its_visitor_sockets_on_every_node(backend: Backend) {
    let node_a = TestApp::spawn(backend).await;
    let node_b = node_a.spawn_peer().await;
    let acme = node_a.company().await;
    let chat = anonymous_chat(&node_a, &acme).await;
    let session = id_of(&chat);
    let mut sockets = open_visitor_sockets(&node_a, &node_b, &chat).await;

    revoke(&node_a, &acme, &session).await;
    let changed = Instant::now();
    post_message(&node_a, &acme, &session).await;

    assert_closed(
        &node_a,
        &mut sockets,
        changed,
        4401,
        "visitor token revoked",
    )
    .await;
}

async fn rotation_without_grace_closes_a_verified_visitors_sockets_on_every_node(backend: Backend) {
    let node_a = TestApp::spawn(backend).await;
    let node_b = node_a.spawn_peer().await;
    let acme = node_a.company().await;
    let secret = rotate(&node_a, &acme, 0).await;
    let chat = verified_chat(&node_a, &acme, &secret, "cust-1").await;
    let session = id_of(&chat);
    let mut sockets = open_visitor_sockets(&node_a, &node_b, &chat).await;

    rotate(&node_a, &acme, 0).await;
    let changed = Instant::now();
    post_message(&node_a, &acme, &session).await;

    assert_closed(
        &node_a,
        &mut sockets,
        changed,
        4401,
        "identity secret rotated",
    )
    .await;
}

async fn revoking_a_sessions_tokens_leaves_another_sessions_socket_open(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let revoked = anonymous_chat(&app, &acme).await;
    let kept = anonymous_chat(&app, &acme).await;
    let mut closing = Client::token(&app, super::text(&revoked, "visitorToken")).await;
    let mut open = Client::token(&app, super::text(&kept, "visitorToken")).await;
    open.subscribe(&format!("session:{}", id_of(&kept))).await;

    revoke(&app, &acme, &id_of(&revoked)).await;
    let closed = closing
        .closed_by(Instant::now() + crate::chat::credentials::BUS_DEADLINE)
        .await;
    assert_eq!(closed, (4401, "visitor token revoked".to_string()));
    // Posted after the notice was applied: an open socket still gets it.
    post_message(&app, &acme, &id_of(&kept)).await;
    assert_eq!(open.next_of("chat.message").await["type"], "chat.message");
}
