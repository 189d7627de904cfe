//! Replay after a reconnect: a socket that comes back with `since` gets
//! exactly the messages it missed, a long replay whole and in order.

use serde_json::json;
use uuid::Uuid;

use super::client::Client;
use super::{id_of, new_session};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    reconnecting_with_since_replays_exactly_the_missed_messages,
    a_long_replay_arrives_whole_and_in_order,
);

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
    // Made before "five", so that its `chat.session` on the entity channel
    // has been dispatched (the bus delivers in order) by the time the
    // visitor has "five", before the entity subscription below.
    let other = new_session(&app, &acme, json!({})).await;
    // Live messages continue after the replay.
    post("five").await.assert_status(201);
    assert_eq!(visitor.next().await["data"]["body"], "five");

    // `since` must be a message of the channel.
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
            expected_version: None,
        };
        let message = supportdesk::sequences::chat_message::create_message(
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
