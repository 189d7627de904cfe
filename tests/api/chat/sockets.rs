//! The socket protocol on one node: messages sent through REST or a socket
//! reach the subscribed sockets, a visitor's socket is confined to its
//! session, typing reaches the other side.

use serde_json::{Value, json};
use supportdesk::auth::{Mode, Scope, ScopeSet};

use super::client::Client;
use super::{agent, id_of, new_session};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_rest_message_reaches_subscribed_sockets,
    a_visitor_socket_reads_and_writes_only_its_session,
    typing_reaches_the_other_side,
);

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
