//! Duplicate-free sends: a `clientMessageId` makes a resent message (same
//! socket, a new socket after a reconnect, or REST) the first one again.

use serde_json::{Value, json};

use super::client::Client;
use super::{agent, id_of, new_session, queued_emails};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_frame_sent_twice_with_one_client_message_id_is_stored_and_pushed_once,
    a_frame_resent_after_a_reconnect_is_stored_and_pushed_once,
    a_rest_message_sent_twice_with_one_client_message_id_is_stored_once,
    concurrent_sends_with_one_client_message_id_store_one_message,
    a_client_message_id_belongs_to_its_session,
    an_invalid_client_message_id_is_refused,
);

async fn stored_messages(app: &TestApp, key: &str, session: &str) -> Vec<Value> {
    let read = app.get(&format!("/chat/sessions/{session}"), key).await;
    read.assert_status(200)["messages"]
        .as_array()
        .expect("messages")
        .clone()
}

async fn a_frame_sent_twice_with_one_client_message_id_is_stored_and_pushed_once(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({})).await;
    let id = id_of(&session);
    let mut watcher = Client::key(&app, &acme.key).await;
    watcher.subscribe(&format!("session:{id}")).await;
    let mut visitor = Client::token(&app, session["visitorToken"].as_str().expect("token")).await;

    let frame =
        |n: u32| json!({"type": "message", "id": n, "body": "Hello?", "clientMessageId": "c-1"});
    visitor.send(frame(1)).await;
    let first = visitor.next().await;
    assert_eq!(
        (&first["type"], &first["id"]),
        (&json!("chat.message"), &json!(1))
    );
    assert_eq!(first["data"]["clientMessageId"], "c-1");
    visitor.send(frame(2)).await;
    let second = visitor.next().await;
    assert_eq!(
        (&second["type"], &second["id"]),
        (&json!("chat.message"), &json!(2))
    );
    assert_eq!(second["data"], first["data"]);

    assert_eq!(watcher.next().await["data"]["id"], first["data"]["id"]);
    watcher.assert_nothing_before_pong().await;
    assert_eq!(stored_messages(&app, &acme.key, &id).await.len(), 1);
}

async fn a_frame_resent_after_a_reconnect_is_stored_and_pushed_once(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = agent(&app, &acme, "Ann").await;
    let session = new_session(&app, &acme, json!({})).await;
    let id = id_of(&session);
    let mut watcher = Client::token(&app, session["visitorToken"].as_str().expect("token")).await;
    watcher.subscribe(&format!("session:{id}")).await;
    let frame = json!({"type": "message", "sessionId": id, "senderId": ann,
                       "body": "On my way", "clientMessageId": "ann-1"});

    let mut console = Client::key(&app, &acme.key).await;
    console.send(frame.clone()).await;
    let first = console.next().await;
    assert_eq!(first["type"], "chat.message", "{first}");
    console.ws.close(None).await.expect("closed");

    // The console did not see its ack in time: it reconnects and resends.
    let mut console = Client::key(&app, &acme.key).await;
    console.send(frame).await;
    let again = console.next().await;
    assert_eq!(again["data"], first["data"]);

    assert_eq!(watcher.next().await["data"]["id"], first["data"]["id"]);
    watcher.assert_nothing_before_pong().await;
    assert_eq!(stored_messages(&app, &acme.key, &id).await.len(), 1);
}

async fn a_rest_message_sent_twice_with_one_client_message_id_is_stored_once(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = agent(&app, &acme, "Ann").await;
    let session = new_session(&app, &acme, json!({"visitorEmail": "vic@example.com"})).await;
    let id = id_of(&session);
    let path = format!("/chat/sessions/{id}/messages");
    let body = json!({"body": "Try this", "senderType": "agent", "senderId": ann,
                      "clientMessageId": "r-1"});

    let first = app.post(&path, &acme.key, body.clone()).await;
    let first = first.assert_status(201).clone();
    assert_eq!(first["clientMessageId"], "r-1");
    let repeat = app.post(&path, &acme.key, body).await;
    assert_eq!(repeat.assert_status(200), &first);

    assert_eq!(stored_messages(&app, &acme.key, &id).await.len(), 1);
    assert_eq!(queued_emails(&app).await.len(), 1, "one reply email");
}

async fn concurrent_sends_with_one_client_message_id_store_one_message(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({})).await;
    let id = id_of(&session);
    let path = format!("/chat/sessions/{id}/messages");
    let body = json!({"body": "Hi", "senderType": "visitor", "clientMessageId": "race"});

    let sends = (0..8).map(|_| app.post(&path, &acme.key, body.clone()));
    let answers = futures::future::join_all(sends).await;
    let created = answers.iter().filter(|a| a.status == 201).count();
    assert_eq!(created, 1, "{answers:?}");
    for answer in &answers {
        assert_eq!(answer.body["id"], answers[0].body["id"], "{}", answer.text);
    }
    assert_eq!(stored_messages(&app, &acme.key, &id).await.len(), 1);
}

async fn a_client_message_id_belongs_to_its_session(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let body = json!({"body": "Hi", "senderType": "visitor", "clientMessageId": "same"});
    let mut ids = Vec::new();
    for _ in 0..2 {
        let session = new_session(&app, &acme, json!({})).await;
        let path = format!("/chat/sessions/{}/messages", id_of(&session));
        let sent = app.post(&path, &acme.key, body.clone()).await;
        ids.push(sent.assert_status(201)["id"].clone());
    }
    assert_ne!(ids[0], ids[1]);
}

async fn an_invalid_client_message_id_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({})).await;
    let id = id_of(&session);
    let path = format!("/chat/sessions/{id}/messages");

    for invalid in [String::new(), "x".repeat(101), "a\0b".to_string()] {
        let refused = app
            .post(
                &path,
                &acme.key,
                json!({"body": "Hi", "senderType": "visitor", "clientMessageId": invalid}),
            )
            .await;
        refused.assert_error(400, "validation_failed");
        assert_eq!(refused.body["details"][0]["field"], "clientMessageId");
    }
    let mut visitor = Client::token(&app, session["visitorToken"].as_str().expect("token")).await;
    visitor
        .send(json!({"type": "message", "id": "m", "body": "Hi", "clientMessageId": ""}))
        .await;
    let error = visitor.next().await;
    assert_eq!(
        (&error["type"], &error["code"], &error["id"]),
        (&json!("error"), &json!("validation_failed"), &json!("m"))
    );
    assert!(stored_messages(&app, &acme.key, &id).await.is_empty());
}
