//! Mentions: an agent named with `@` in an internal note gets a `mention`
//! frame on their socket channel and finds it under their mentions.

use reqwest::Method;
use serde_json::{Value, json};

use super::ticket;
use crate::agents::{send, signed_in, user_id};
use crate::backend_tests;
use crate::chat::client::Client;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    a_note_mentioning_an_agent_is_listed_under_their_mentions_only,
    a_public_reply_mentions_no_one,
    a_mentioned_agent_gets_a_mention_frame_on_their_channel,
);

/// A signed-in agent's personal key (tickets) and user id.
async fn agent(app: &TestApp, acme: &TestCompany, email: &str) -> (String, Value) {
    let browser = signed_in(app, acme, email, "agent").await;
    let body = json!({"name": "mine", "scopes": ["tickets:read", "tickets:write"]});
    let r = send(app, &browser, Method::POST, "/auth/keys", body).await;
    let key = r.assert_status(201)["key"]
        .as_str()
        .expect("key")
        .to_string();
    (key, user_id(&browser))
}

/// A comment on ticket `id` by `acme`'s key; its id.
async fn comment(app: &TestApp, acme: &TestCompany, id: &str, body: Value) -> Value {
    let r = app
        .post(&format!("/tickets/{id}/comments"), &acme.key, body)
        .await;
    r.assert_status(201)["id"].clone()
}

async fn a_note_mentioning_an_agent_is_listed_under_their_mentions_only(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (ann, ann_id) = agent(&app, &acme, "ann@example.com").await;
    let (bob, _) = agent(&app, &acme, "bob@example.com").await;
    let t = ticket(&app, &acme).await;
    let note = json!({"body": "@Ann can you look? (cc vic@example.com)", "isInternal": true});
    let note_id = comment(&app, &acme, &t, note).await;
    let mine = app.get("/mentions", &ann).await;
    mine.assert_status(200);
    let theirs = app.get("/mentions", &bob).await;
    theirs.assert_status(200);
    let first = &mine.body["data"][0];
    assert_eq!(
        (
            mine.body["total"].clone(),
            first["commentId"].clone(),
            first["ticketId"].clone(),
            first["userId"].clone(),
            theirs.body["total"].clone()
        ),
        (json!(1), note_id, json!(t), ann_id, json!(0))
    );
}

async fn a_public_reply_mentions_no_one(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (ann, _) = agent(&app, &acme, "ann@example.com").await;
    let t = ticket(&app, &acme).await;
    comment(&app, &acme, &t, json!({"body": "@ann will call you"})).await;
    let mine = app.get("/mentions", &ann).await;
    assert_eq!(mine.assert_status(200)["total"], 0);
}

async fn a_mentioned_agent_gets_a_mention_frame_on_their_channel(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (_, ann_id) = agent(&app, &acme, "ann@example.com").await;
    let ann_id = ann_id.as_str().expect("id").to_string();
    let mut console = Client::key(&app, &acme.key).await;
    console.subscribe(&format!("agent:{ann_id}")).await;
    let t = ticket(&app, &acme).await;
    let note = json!({"body": "Over to @ann@example.com.", "isInternal": true});
    let note_id = comment(&app, &acme, &t, note).await;
    let frame = console.next_of("mention").await;
    assert_eq!(
        (
            frame["data"]["commentId"].clone(),
            frame["data"]["ticketId"].clone()
        ),
        (note_id, json!(t))
    );
}
