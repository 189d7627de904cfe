//! The socket protocol on one node: handshake, subscriptions, messages,
//! typing, presence, mode isolation, replay after a reconnect.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use supportdesk::auth::{Mode, Scope, ScopeSet};
use tokio_tungstenite::tungstenite::{self, Message};
use uuid::Uuid;

use super::client::Client;
use super::{agent, id_of, new_session};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestResponse};

backend_tests!(
    socket_handshake_refusals_have_the_rest_shape,
    a_rest_message_reaches_subscribed_sockets,
    a_visitor_socket_reads_and_writes_only_its_session,
    typing_reaches_the_other_side,
    presence_transitions_are_pushed_and_private_agents_hidden,
    presence_expiry_is_pushed,
    an_agent_back_after_expiry_expires_again,
    agents_expiring_one_after_the_other_are_each_announced,
    sockets_are_isolated_by_mode,
    reconnecting_with_since_replays_exactly_the_missed_messages,
    a_long_replay_arrives_whole_and_in_order,
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

async fn a_rest_message_reaches_subscribed_sockets(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({})).await;
    let id = id_of(&session);
    let mut by_session = Client::key(&app, &acme.key).await;
    by_session.subscribe(&format!("session:{id}")).await;
    let mut by_entity = Client::key(&app, &acme.key).await;
    by_entity
        .subscribe(&format!("entity:{}", acme.entity.id))
        .await;

    let sent = app
        .post(
            &format!("/chat/sessions/{id}/messages"),
            &acme.key,
            json!({"body": "Hello", "senderType": "visitor"}),
        )
        .await;
    let sent = sent.assert_status(201).clone();
    // The session's own `chat.session`, announced as it was created, can
    // reach a channel subscribed just after it: the message is awaited.
    let pushed = by_session.next_of("chat.message").await;
    assert_eq!(pushed["type"], "chat.message");
    assert_eq!(pushed["channel"], format!("session:{id}"));
    assert_eq!(pushed["data"]["id"], sent["id"]);
    assert_eq!(pushed["data"]["body"], "Hello");
    assert_eq!(pushed["data"]["senderType"], "visitor");
    assert_eq!(pushed["data"]["sessionId"], id.as_str());
    assert_eq!(pushed["data"]["createdAt"], sent["createdAt"]);
    let on_entity = by_entity.next_of("chat.message").await;
    assert_eq!(on_entity["type"], "chat.message");
    assert_eq!(on_entity["channel"], format!("entity:{}", acme.entity.id));
    assert_eq!(on_entity["data"]["id"], sent["id"]);

    // Closing pushes chat.session to both.
    app.patch(
        &format!("/chat/sessions/{id}"),
        &acme.key,
        json!({"status": "CLOSED"}),
    )
    .await
    .assert_status(200);
    let closed = by_session.next().await;
    assert_eq!(closed["type"], "chat.session");
    assert_eq!(closed["data"]["status"], "CLOSED");
    assert_eq!(closed["data"]["id"], id.as_str());
    // The close also asks the session's visitor for a rating (csat auto).
    assert_eq!(by_session.next().await["type"], "rating_requested");
    assert_eq!(by_entity.next().await["type"], "chat.session");
    // A no-op close pushes nothing.
    app.patch(
        &format!("/chat/sessions/{id}"),
        &acme.key,
        json!({"status": "CLOSED"}),
    )
    .await
    .assert_status(200);
    by_session.assert_nothing_before_pong().await;

    // A new session of the entity is announced on the entity channel.
    let fresh = new_session(&app, &acme, json!({"visitorName": "Newcomer"})).await;
    let announced = by_entity.next().await;
    assert_eq!(announced["type"], "chat.session");
    assert_eq!(announced["data"]["id"], fresh["id"]);
    assert!(announced["data"].get("visitorToken").is_none());

    // After unsubscribing nothing more arrives.
    by_session
        .send(json!({"type": "unsubscribe", "channel": format!("session:{id}"), "id": "u"}))
        .await;
    assert_eq!(
        by_session.next().await,
        json!({"type": "unsubscribed", "channel": format!("session:{id}"), "id": "u"})
    );
    app.patch(
        &format!("/chat/sessions/{id}"),
        &acme.key,
        json!({"status": "ACTIVE"}),
    )
    .await
    .assert_status(200);
    assert_eq!(by_entity.next().await["data"]["status"], "ACTIVE");
    by_session.assert_nothing_before_pong().await;
}

async fn a_visitor_socket_reads_and_writes_only_its_session(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = agent(&app, &acme, "Ann").await;
    let mine = new_session(&app, &acme, json!({"visitorName": "Vic"})).await;
    let theirs = new_session(&app, &acme, json!({})).await;
    let mine_id = id_of(&mine);
    let theirs_id = id_of(&theirs);
    let mut visitor = Client::token(&app, mine["visitorToken"].as_str().expect("token")).await;

    // Reads: its session and presence only.
    visitor.subscribe(&format!("session:{mine_id}")).await;
    visitor
        .send(json!({"type": "subscribe", "channel": format!("session:{theirs_id}"), "id": 1}))
        .await;
    let error = visitor.next().await;
    assert_eq!(
        (&error["code"], &error["id"]),
        (&json!("not_found"), &json!(1))
    );
    visitor
        .send(json!({"type": "subscribe", "channel": format!("entity:{}", acme.entity.id)}))
        .await;
    assert_eq!(visitor.next().await["code"], "insufficient_scope");
    visitor.subscribe("presence").await;

    // An agent's REST reply reaches the visitor, with the agent's name.
    app.post(
        &format!("/chat/sessions/{mine_id}/messages"),
        &acme.key,
        json!({"body": "How can I help?", "senderType": "agent", "senderId": ann}),
    )
    .await
    .assert_status(201);
    let reply = visitor.next().await;
    assert_eq!(reply["type"], "chat.message");
    assert_eq!(reply["data"]["senderName"], "Ann");
    // Messages in another session do not.
    app.post(
        &format!("/chat/sessions/{theirs_id}/messages"),
        &acme.key,
        json!({"body": "Private", "senderType": "visitor"}),
    )
    .await
    .assert_status(201);
    visitor.assert_nothing_before_pong().await;

    // Writes: its own session only, always as the visitor.
    let mut agent_socket = Client::key(&app, &acme.key).await;
    agent_socket.subscribe(&format!("session:{mine_id}")).await;
    visitor
        .send(
            json!({"type": "message", "body": " My printer is on fire ", "id": "m1",
                     "senderId": ann}),
        )
        .await;
    let ack = visitor.next().await;
    assert_eq!(ack["type"], "chat.message");
    assert_eq!(ack["id"], "m1");
    assert_eq!(ack["data"]["body"], "My printer is on fire");
    assert_eq!(ack["data"]["senderType"], "visitor");
    assert_eq!(ack["data"]["senderId"], Value::Null);
    // The broadcast copy (same message) also reaches the subscribers.
    let copy = visitor.next().await;
    assert_eq!(copy["data"]["id"], ack["data"]["id"]);
    assert!(copy.get("id").is_none());
    assert_eq!(agent_socket.next().await["data"]["id"], ack["data"]["id"]);

    visitor
        .send(json!({"type": "message", "sessionId": theirs_id, "body": "sneaky"}))
        .await;
    assert_eq!(visitor.next().await["code"], "not_found");
    visitor.send(json!({"type": "message", "body": ""})).await;
    assert_eq!(visitor.next().await["code"], "validation_failed");
    let read = app
        .get(&format!("/chat/sessions/{theirs_id}"), &acme.key)
        .await;
    let messages = read.assert_status(200)["messages"].clone();
    assert_eq!(
        messages.as_array().map(Vec::len),
        Some(1),
        "no sneaky message"
    );

    // Closed session: the visitor gets session_closed.
    app.patch(
        &format!("/chat/sessions/{mine_id}"),
        &acme.key,
        json!({"status": "CLOSED"}),
    )
    .await
    .assert_status(200);
    assert_eq!(
        visitor.next_of("chat.session").await["data"]["status"],
        "CLOSED"
    );
    assert_eq!(agent_socket.next().await["type"], "chat.session");
    // The close asks for a rating on the session's channel (both see it).
    assert_eq!(agent_socket.next().await["type"], "rating_requested");
    assert_eq!(visitor.next().await["type"], "rating_requested");
    visitor
        .send(json!({"type": "message", "body": "hello?"}))
        .await;
    assert_eq!(visitor.next().await["code"], "session_closed");

    // An agent socket posts with a senderId, and needs chat:write.
    let reader = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::from_scopes([Scope::ChatRead]),
        )
        .await;
    let mut read_only = Client::key(&app, &reader).await;
    read_only
        .send(json!({"type": "message", "sessionId": theirs_id, "body": "x", "senderId": ann}))
        .await;
    assert_eq!(read_only.next().await["code"], "insufficient_scope");
    agent_socket
        .send(json!({"type": "message", "sessionId": theirs_id, "body": "x"}))
        .await;
    assert_eq!(agent_socket.next().await["code"], "validation_failed");
    agent_socket
        .send(json!({"type": "message", "sessionId": theirs_id, "body": "On it", "senderId": ann}))
        .await;
    let sent = agent_socket.next().await;
    assert_eq!(sent["data"]["senderType"], "agent");
    assert_eq!(sent["data"]["senderName"], "Ann");
}

async fn typing_reaches_the_other_side(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = agent(&app, &acme, "Ann").await;
    let mut console = Client::key(&app, &acme.key).await;
    console
        .subscribe(&format!("entity:{}", acme.entity.id))
        .await;
    let session = new_session(&app, &acme, json!({})).await;
    let id = id_of(&session);
    // Subscribed first, so the session's creation frame surely comes first
    // (it may otherwise arrive after the subscription, before the typing).
    console.next_of("chat.session").await;
    let mut visitor = Client::token(&app, session["visitorToken"].as_str().expect("token")).await;
    visitor.subscribe(&format!("session:{id}")).await;

    visitor.send(json!({"type": "typing"})).await;
    let typing = console.next().await;
    assert_eq!(typing["type"], "typing");
    assert_eq!(typing["channel"], format!("entity:{}", acme.entity.id));
    assert_eq!(
        typing["data"],
        json!({"sessionId": id, "senderType": "visitor", "senderId": null})
    );

    console
        .send(json!({"type": "typing", "sessionId": id, "senderId": ann}))
        .await;
    // The visitor sees its own typing echo first, then the agent's.
    let mut seen = Vec::new();
    while seen.len() < 2 {
        let frame = visitor.next().await;
        assert_eq!(frame["type"], "typing");
        seen.push(
            frame["data"]["senderType"]
                .as_str()
                .expect("type")
                .to_string(),
        );
    }
    assert_eq!(seen, ["visitor", "agent"]);
}

async fn presence_transitions_are_pushed_and_private_agents_hidden(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({})).await;
    let mut console = Client::key(&app, &acme.key).await;
    console.subscribe("presence").await;
    // Past the (empty) presence snapshot, so a heartbeat below cannot
    // show in it as well as live.
    console.assert_nothing_before_pong().await;
    let mut visitor = Client::token(&app, session["visitorToken"].as_str().expect("token")).await;
    visitor.subscribe("presence").await;
    visitor.assert_nothing_before_pong().await;

    let ann = Uuid::now_v7();
    let beat = json!({"userId": ann, "name": "Ann", "email": "ann@acme.test"});
    app.post("/chat/agent-presence", &acme.key, beat.clone())
        .await
        .assert_status(200);
    for socket in [&mut console, &mut visitor] {
        let online = socket.next().await;
        assert_eq!(online["type"], "presence");
        assert_eq!(online["channel"], "presence");
        assert_eq!(online["data"]["userId"], json!(ann));
        assert_eq!(online["data"]["name"], "Ann");
        assert_eq!(online["data"]["online"], true);
        assert_eq!(online["data"]["visibility"], "PUBLIC");
        assert!(online["data"]["lastSeen"].is_string());
    }

    // A heartbeat that changes nothing pushes nothing.
    app.post("/chat/agent-presence", &acme.key, json!({"userId": ann}))
        .await
        .assert_status(200);
    console.assert_nothing_before_pong().await;
    visitor.assert_nothing_before_pong().await;

    // A PRIVATE agent: agents see it, visitors never do.
    let bob = Uuid::now_v7();
    app.post(
        "/chat/agent-presence",
        &acme.key,
        json!({"userId": bob, "name": "Bob", "email": "bob@acme.test", "visibility": "PRIVATE"}),
    )
    .await
    .assert_status(200);
    let private = console.next().await;
    assert_eq!(private["data"]["userId"], json!(bob));
    assert_eq!(private["data"]["visibility"], "PRIVATE");
    visitor.assert_nothing_before_pong().await;

    // A late subscriber gets a snapshot of who is online.
    let mut late_visitor =
        Client::token(&app, session["visitorToken"].as_str().expect("token")).await;
    late_visitor.subscribe("presence").await;
    let snapshot = late_visitor.next().await;
    assert_eq!(snapshot["data"]["userId"], json!(ann));
    late_visitor.assert_nothing_before_pong().await;

    // DELETE pushes offline (to visitors only for public agents).
    app.delete(&format!("/chat/agent-presence/{bob}"), &acme.key)
        .await
        .assert_status(200);
    let gone = console.next().await;
    assert_eq!(
        (&gone["data"]["userId"], &gone["data"]["online"]),
        (&json!(bob), &json!(false))
    );
    visitor.assert_nothing_before_pong().await;
    app.delete(&format!("/chat/agent-presence/{ann}"), &acme.key)
        .await
        .assert_status(200);
    for socket in [&mut console, &mut visitor] {
        let offline = socket.next().await;
        assert_eq!(offline["data"]["userId"], json!(ann));
        assert_eq!(offline["data"]["online"], false);
    }
    // Removing an absent agent pushes nothing.
    app.delete(&format!("/chat/agent-presence/{ann}"), &acme.key)
        .await
        .assert_status(200);
    console.assert_nothing_before_pong().await;
}

pub(crate) async fn presence_expiry_is_pushed(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.presence_ttl = Duration::from_secs(2)).await;
    let acme = app.company().await;
    let mut console = Client::key(&app, &acme.key).await;
    console.subscribe("presence").await;
    // Past the (empty) presence snapshot, so a heartbeat below cannot
    // show in it as well as live.
    console.assert_nothing_before_pong().await;
    let ann = Uuid::now_v7();
    let sent_at = std::time::Instant::now();
    app.post(
        "/chat/agent-presence",
        &acme.key,
        json!({"userId": ann, "name": "Ann", "email": "ann@acme.test"}),
    )
    .await
    .assert_status(200);
    assert_eq!(console.next().await["data"]["online"], true);

    // No more heartbeats: the sweeper announces the expiry.
    let offline = console.next().await;
    assert_eq!(offline["type"], "presence");
    assert_eq!(offline["data"]["userId"], json!(ann));
    assert_eq!(offline["data"]["online"], false);
    assert!(
        sent_at.elapsed() >= Duration::from_millis(1500),
        "not before the TTL"
    );
    let listed = app.get("/chat/agent-presence", &acme.key).await;
    assert_eq!(listed.assert_status(200)["data"], json!([]));
    // Exactly once.
    console.assert_nothing_before_pong().await;

    // Coming back after expiry is a new online transition.
    app.post("/chat/agent-presence", &acme.key, json!({"userId": ann}))
        .await
        .assert_status(200);
    assert_eq!(console.next().await["data"]["online"], true);
}

/// The sweep takes a company with no agents left off its list; the next
/// heartbeat must put it back so that the next expiry is announced too.
async fn an_agent_back_after_expiry_expires_again(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.presence_ttl = Duration::from_secs(1)).await;
    let acme = app.company().await;
    let mut console = Client::key(&app, &acme.key).await;
    console.subscribe("presence").await;
    // Past the (empty) presence snapshot, so a heartbeat below cannot
    // show in it as well as live.
    console.assert_nothing_before_pong().await;
    let ann = Uuid::now_v7();
    for _ in 0..2 {
        app.post(
            "/chat/agent-presence",
            &acme.key,
            json!({"userId": ann, "name": "Ann", "email": "ann@acme.test"}),
        )
        .await
        .assert_status(200);
        assert_eq!(console.next().await["data"]["online"], true);
        let offline = console.next().await;
        assert_eq!(
            (&offline["data"]["userId"], &offline["data"]["online"]),
            (&json!(ann), &json!(false))
        );
    }
}

/// A sweep that finds one agent expired and another still online comes
/// back for the second when its time is up.
async fn agents_expiring_one_after_the_other_are_each_announced(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.presence_ttl = Duration::from_secs(2)).await;
    let acme = app.company().await;
    let mut console = Client::key(&app, &acme.key).await;
    console.subscribe("presence").await;
    // Past the (empty) presence snapshot, so a heartbeat below cannot
    // show in it as well as live.
    console.assert_nothing_before_pong().await;
    let (ann, bob) = (Uuid::now_v7(), Uuid::now_v7());
    for (user, name) in [(ann, "Ann"), (bob, "Bob")] {
        app.post(
            "/chat/agent-presence",
            &acme.key,
            json!({"userId": user, "name": name, "email": format!("{name}@acme.test")}),
        )
        .await
        .assert_status(200);
        assert_eq!(console.next().await["data"]["online"], true);
        // Bob's expiry lies well after Ann's: separate sweeps. After
        // Bob's heartbeat this passes Ann's expiry and not yet his.
        app.state
            .clock
            .advance(chrono::TimeDelta::milliseconds(1200));
    }
    for user in [ann, bob] {
        let offline = console.next().await;
        assert_eq!(
            (&offline["data"]["userId"], &offline["data"]["online"]),
            (&json!(user), &json!(false))
        );
        // Past Bob's expiry too, once Ann's has been announced.
        app.state.clock.advance(chrono::TimeDelta::seconds(1));
    }
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

async fn reconnecting_with_since_replays_exactly_the_missed_messages(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({})).await;
    let id = id_of(&session);
    let token = session["visitorToken"].as_str().expect("token").to_string();
    let post = |body: &str| {
        let path = format!("/chat/sessions/{id}/messages");
        let body = json!({"body": body, "senderType": "system"});
        let (app, key) = (&app, &acme.key);
        async move { app.post(&path, key, body).await }
    };
    let mut visitor = Client::token(&app, &token).await;
    visitor.subscribe(&format!("session:{id}")).await;
    post("one").await.assert_status(201);
    let seen = visitor.next().await;
    assert_eq!(seen["data"]["body"], "one");
    let last_seen = seen["data"]["id"].as_str().expect("id").to_string();
    drop(visitor);

    // Missed while disconnected.
    let mut missed = Vec::new();
    for body in ["two", "three", "four"] {
        missed.push(id_of(post(body).await.assert_status(201)));
    }

    let mut visitor = Client::token(&app, &token).await;
    visitor
        .send(
            json!({"type": "subscribe", "channel": format!("session:{id}"),
                     "since": last_seen, "id": "r"}),
        )
        .await;
    assert_eq!(
        visitor.next().await,
        json!({"type": "subscribed", "channel": format!("session:{id}"), "id": "r"})
    );
    let mut replayed = Vec::new();
    for _ in 0..missed.len() {
        let frame = visitor.next().await;
        assert_eq!(frame["type"], "chat.message");
        assert_eq!(frame["channel"], format!("session:{id}"));
        replayed.push(frame["data"]["id"].as_str().expect("id").to_string());
    }
    assert_eq!(replayed, missed, "exactly the missed messages, in order");
    visitor.assert_nothing_before_pong().await;
    // Live messages continue after the replay.
    post("five").await.assert_status(201);
    assert_eq!(visitor.next().await["data"]["body"], "five");

    // `since` must be a message of the channel.
    let other = new_session(&app, &acme, json!({})).await;
    let mut agent_socket = Client::key(&app, &acme.key).await;
    agent_socket
        .send(
            json!({"type": "subscribe", "channel": format!("session:{}", id_of(&other)),
                     "since": last_seen}),
        )
        .await;
    let error = agent_socket.next().await;
    assert_eq!(error["code"], "validation_failed");
    // An entity channel replays the entity's messages after `since`.
    agent_socket
        .send(
            json!({"type": "subscribe", "channel": format!("entity:{}", acme.entity.id),
                     "since": missed[2]}),
        )
        .await;
    assert_eq!(agent_socket.next().await["type"], "subscribed");
    assert_eq!(agent_socket.next().await["data"]["body"], "five");
    agent_socket.assert_nothing_before_pong().await;
}

async fn a_long_replay_arrives_whole_and_in_order(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({})).await;
    let id = Uuid::parse_str(&id_of(&session)).expect("id");
    let tenant = super::tenant(&acme);
    let mut ids = Vec::new();
    // More than two replay batches, written straight to the store.
    for n in 0..450 {
        let new = supportdesk::chat::model::NewMessage {
            body: format!("message {n}"),
            sender_type: supportdesk::chat::model::SenderType::System,
            sender_id: None,
            client_message_id: None,
            attachment_ids: Vec::new(),
            visitor_uploads_only: false,
        };
        let message = supportdesk::chat::store::create_message(
            &app.state.db,
            &tenant,
            id,
            new,
            None,
            app.state.clock.now(),
            &app.state.link_signer(),
        )
        .await
        .expect("stored")
        .into_message();
        ids.push(message.id.to_string());
    }
    let mut socket = Client::key(&app, &acme.key).await;
    socket
        .send(json!({"type": "subscribe", "channel": format!("session:{id}"), "since": ids[0]}))
        .await;
    assert_eq!(socket.next().await["type"], "subscribed");
    let mut replayed = Vec::new();
    for _ in 1..ids.len() {
        replayed.push(
            socket.next().await["data"]["id"]
                .as_str()
                .expect("id")
                .to_string(),
        );
    }
    assert_eq!(replayed, ids[1..]);
    socket.assert_nothing_before_pong().await;
}
