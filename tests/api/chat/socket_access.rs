//! Who may open a socket and what it sees: handshake refusals in the REST
//! error shape, and sockets of one mode never seeing the other mode's events.

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use supportdesk::auth::{Mode, Scope, ScopeSet};
use tokio_tungstenite::tungstenite::{self, Message};
use uuid::Uuid;

use super::client::Client;
use super::id_of;
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestResponse};

backend_tests!(
    socket_handshake_refusals_have_the_rest_shape,
    sockets_are_isolated_by_mode,
);

async fn socket_handshake_refusals_have_the_rest_shape(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let plain = |token: Option<&str>, key: Option<&str>| {
        let mut url = app.url("/api/v1/ws");
        if let Some(token) = token {
            url.push_str(&format!("?token={token}"));
        }
        let mut request = app.client.get(url);
        if let Some(key) = key {
            request = request.header("X-API-Key", key);
        }
        request.send()
    };
    TestResponse::from(plain(None, None).await)
        .await
        .assert_error(401, "missing_api_key");
    TestResponse::from(plain(None, Some("svc_test_nope")).await)
        .await
        .assert_error(401, "invalid_api_key");
    TestResponse::from(plain(Some("vt_forged"), None).await)
        .await
        .assert_error(401, "invalid_token");
    let no_chat = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::from_scopes([Scope::TicketsRead]),
        )
        .await;
    let refused = TestResponse::from(plain(None, Some(&no_chat)).await).await;
    refused.assert_error(403, "insufficient_scope");
    assert_eq!(
        refused.body["error"],
        "Missing required permission: chat:read"
    );
    // Authenticated but not an upgrade.
    TestResponse::from(plain(None, Some(&acme.key)).await)
        .await
        .assert_error(426, "upgrade_required");
    // The handshake spends the key's allowance like any /api/v1 request.
    let one_request = app
        .key_with(acme.company.id, Mode::Test, ScopeSet::all(), 1)
        .await;
    TestResponse::from(plain(None, Some(&one_request)).await)
        .await
        .assert_error(426, "upgrade_required");
    let limited = TestResponse::from(plain(None, Some(&one_request)).await).await;
    limited.assert_error(429, "rate_limited");
    assert!(
        limited.header("retry-after").is_some(),
        "{:?}",
        limited.headers
    );

    // The same refusals on a real handshake are HTTP errors.
    match Client::try_connect(&app, None, Some("st_forged")).await {
        Err(tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), 401);
            let body: Value =
                serde_json::from_slice(response.body().as_deref().unwrap_or_default())
                    .expect("JSON body");
            assert_eq!(body["code"], "invalid_token");
        }
        Err(other) => panic!("unexpected error {other}"),
        Ok(_) => panic!("a forged token opened a socket"),
    }

    // A socket token from POST /ws/tokens works; a key header too.
    let minted = app.post("/ws/tokens", &acme.key, json!({})).await;
    let minted = minted.assert_status(201).clone();
    let token = minted["token"].as_str().expect("token");
    assert!(token.starts_with("st_") && minted["expiresAt"].is_string());
    let mut console = Client::token(&app, token).await;
    console.subscribe("presence").await;
    console.assert_nothing_before_pong().await;
    let mut server = Client::key(&app, &acme.key).await;
    server.assert_nothing_before_pong().await;

    // Bad frames get error frames with REST's codes; the socket stays open.
    server
        .ws
        .send(Message::text("not json"))
        .await
        .expect("sent");
    assert_eq!(server.next().await["code"], "invalid_json");
    server.send(json!({"type": "dance", "id": 7})).await;
    let error = server.next().await;
    assert_eq!(
        (error["type"].as_str(), error["code"].as_str(), &error["id"]),
        (Some("error"), Some("validation_failed"), &json!(7))
    );
    server
        .send(json!({"type": "subscribe", "channel": "tickets:nope"}))
        .await;
    assert_eq!(server.next().await["code"], "validation_failed");
    server
        .send(json!({"type": "subscribe", "channel": format!("session:{}", Uuid::now_v7())}))
        .await;
    assert_eq!(server.next().await["code"], "not_found");
    server.assert_nothing_before_pong().await;

    // A client's close is answered with a close.
    server.ws.close(None).await.expect("close sent");
    let reply = tokio::time::timeout(super::WAIT, server.ws.next())
        .await
        .expect("a reply");
    assert!(matches!(reply, Some(Ok(Message::Close(_)))), "{reply:?}");
}

async fn sockets_are_isolated_by_mode(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let live_key = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    let mut test_socket = Client::key(&app, &acme.key).await;
    let mut live_socket = Client::key(&app, &live_key).await;
    let entity = format!("entity:{}", acme.entity.id);
    for socket in [&mut test_socket, &mut live_socket] {
        socket.subscribe(&entity).await;
        socket.subscribe("presence").await;
    }

    // A LIVE session's message and a LIVE agent reach only the LIVE socket.
    let live_session = app
        .post(
            "/chat/sessions",
            &live_key,
            json!({"entityId": acme.entity.id}),
        )
        .await;
    let live_session = live_session.assert_status(201).clone();
    assert_eq!(live_socket.next().await["type"], "chat.session");
    app.post(
        &format!("/chat/sessions/{}/messages", id_of(&live_session)),
        &live_key,
        json!({"body": "live", "senderType": "visitor"}),
    )
    .await
    .assert_status(201);
    assert_eq!(live_socket.next().await["data"]["body"], "live");
    app.post(
        "/chat/agent-presence",
        &live_key,
        json!({"userId": Uuid::now_v7(), "name": "Liv", "email": "liv@acme.test"}),
    )
    .await
    .assert_status(200);
    assert_eq!(live_socket.next().await["type"], "presence");
    test_socket.assert_nothing_before_pong().await;

    // A TEST socket cannot subscribe to a LIVE session.
    test_socket
        .send(json!({"type": "subscribe", "channel": format!("session:{}", id_of(&live_session))}))
        .await;
    assert_eq!(test_socket.next().await["code"], "not_found");
}
