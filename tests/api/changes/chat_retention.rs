//! A chat the retention pass deletes, by the service-wide chat retention
//! or by its company's own data retention, leaves the feed as a deleted
//! ticket does: a delete for each of its messages, then one for the
//! session, so a follower drops them; a ticket made from it, which keeps
//! existing without the link, gets an entry of its own.

use std::time::Duration;

use serde_json::json;

use super::{Follower, id_of, new_session};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany, retention_pass};

backend_tests!(
    a_chat_past_the_chat_retention_is_deleted_in_the_feed,
    a_chat_past_its_companys_retention_is_deleted_in_the_feed,
    a_ticket_made_from_a_chat_the_pass_deletes_loses_the_link_in_the_feed,
);

/// (type, id, op) of a feed entry.
type Seen = (String, String, String);

fn delete(kind: &str, id: &str) -> Seen {
    (kind.to_string(), id.to_string(), "delete".to_string())
}

/// A chat with two messages, closed; answers its id and its messages'.
async fn closed_chat(app: &TestApp, acme: &TestCompany) -> (String, Vec<String>) {
    let session = id_of(&new_session(app, acme).await);
    let mut messages = Vec::new();
    for body in ["Hello", "Anyone there?"] {
        let message = app
            .post(
                &format!("/chat/sessions/{session}/messages"),
                &acme.key,
                json!({"body": body, "senderType": "visitor"}),
            )
            .await
            .assert_status(201)
            .clone();
        messages.push(id_of(&message));
    }
    app.patch(
        &format!("/chat/sessions/{session}"),
        &acme.key,
        json!({"status": "CLOSED"}),
    )
    .await
    .assert_status(200);
    (session, messages)
}

/// Makes a closed chat, lets two days pass and runs the retention pass;
/// asserts that the entries the pass wrote are the chat's deletes, its
/// messages' in order, then its own.
async fn the_pass_deletes_the_chat_in_the_feed(app: &TestApp, acme: &TestCompany) {
    let (session, messages) = closed_chat(app, acme).await;
    let mut follower = Follower::default();
    follower.catch_up(app, &acme.key).await;
    let before = follower.seen.len();

    app.state.clock.advance(chrono::TimeDelta::days(2));
    retention_pass(app).await;
    follower.catch_up(app, &acme.key).await;

    let seen: Vec<Seen> = follower.seen[before..]
        .iter()
        .map(|entry| {
            (
                entry["type"].as_str().expect("type").to_string(),
                id_of(entry),
                entry["op"].as_str().expect("op").to_string(),
            )
        })
        .collect();
    let expected = vec![
        delete("chat_message", &messages[0]),
        delete("chat_message", &messages[1]),
        delete("chat_session", &session),
    ];
    assert_eq!(seen, expected);
}

/// An app whose chats are kept a day after they close.
async fn retained(backend: Backend) -> TestApp {
    TestApp::spawn_with(backend, |config| {
        config.run_workers = false;
        config.chat_retention = Some(Duration::from_secs(24 * 3600));
    })
    .await
}

async fn a_chat_past_the_chat_retention_is_deleted_in_the_feed(backend: Backend) {
    let app = retained(backend).await;
    let acme = app.company().await;
    the_pass_deletes_the_chat_in_the_feed(&app, &acme).await;
}

async fn a_chat_past_its_companys_retention_is_deleted_in_the_feed(backend: Backend) {
    let app = TestApp::spawn_with(backend, |config| config.run_workers = false).await;
    let acme = app.company().await;
    let policy = json!({"dataRetention": {"closedChatsDays": 1}});
    app.patch("/settings", &acme.key, policy)
        .await
        .assert_status(200);
    the_pass_deletes_the_chat_in_the_feed(&app, &acme).await;
}

async fn a_ticket_made_from_a_chat_the_pass_deletes_loses_the_link_in_the_feed(backend: Backend) {
    let app = retained(backend).await;
    let acme = app.company().await;
    let (session, _) = closed_chat(&app, &acme).await;
    let ticket = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": "Follow-up", "entityId": acme.entity.id,
                   "chatSessionId": session}),
        )
        .await
        .assert_status(201)
        .clone();
    let ticket = id_of(&ticket);
    let mut follower = Follower::default();
    follower.catch_up(&app, &acme.key).await;

    app.state.clock.advance(chrono::TimeDelta::days(2));
    retention_pass(&app).await;
    follower.catch_up(&app, &acme.key).await;

    let key = ("ticket".to_string(), ticket.clone());
    let read = app.get(&format!("/tickets/{ticket}"), &acme.key).await;
    assert_eq!(follower.mirror.get(&key), Some(read.assert_status(200)));
}
