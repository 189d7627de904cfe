//! Team-scoped visibility on sockets: an agent limited to their teams,
//! on a socket opened with their session cookie, subscribes to their
//! teams' chats only, and the chat events of other teams never reach them.

use serde_json::{Value, json};

use super::team_desk::Desk;
use crate::backend_tests;
use crate::chat::client::Client;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_limited_agent_subscribes_only_to_their_teams_channels,
    chat_events_outside_their_teams_do_not_reach_a_limited_agent,
);

/// An app whose workers (the queues' periodic drain) send no frames of
/// their own.
async fn quiet(backend: Backend) -> TestApp {
    TestApp::spawn_with(backend, |c| c.run_workers = false).await
}

async fn socket(desk: &Desk) -> Client {
    Client::try_with_headers(
        &desk.app,
        &[
            ("Cookie", &desk.limited.cookie),
            ("Origin", &desk.app.address),
        ],
    )
    .await
    .expect("socket opens")
}

/// The reply to subscribing to `channel`: `subscribed`, or the error's
/// code (a session's queue place, sent after `subscribed`, is skipped).
async fn subscribe(socket: &mut Client, channel: &str) -> String {
    socket
        .send(json!({"type": "subscribe", "channel": channel}))
        .await;
    let reply: Value = socket
        .next_where(|frame| frame["type"] == "subscribed" || frame["type"] == "error")
        .await;
    match reply["type"].as_str() {
        Some("subscribed") => "subscribed".to_string(),
        _ => reply["code"].as_str().unwrap_or("no code").to_string(),
    }
}

async fn a_limited_agent_subscribes_only_to_their_teams_channels(backend: Backend) {
    let desk = Desk::open(quiet(backend).await).await;
    let mut socket = socket(&desk).await;
    let entity = desk.acme.entity.id;

    let mut replies = Vec::new();
    for channel in [
        format!("session:{}", desk.theirs.session),
        format!("session:{}", desk.loose.session),
        format!("agent:{}", desk.other_user),
        format!("entity:{entity}"),
        "tickets".to_string(),
        format!("tickets:{entity}"),
        format!("session:{}", desk.mine.session),
        format!("agent:{}", desk.limited_id),
    ] {
        let reply = subscribe(&mut socket, &channel).await;
        replies.push((channel, reply));
    }

    let answers: Vec<&str> = replies.iter().map(|(_, reply)| reply.as_str()).collect();
    assert_eq!(
        answers,
        [
            "not_found",
            "not_found",
            "not_found",
            "insufficient_scope",
            "insufficient_scope",
            "insufficient_scope",
            "subscribed",
            "subscribed",
        ],
        "{replies:?}"
    );
    desk.app.stop().await;
}

async fn chat_events_outside_their_teams_do_not_reach_a_limited_agent(backend: Backend) {
    let desk = Desk::open(TestApp::spawn(backend).await).await;
    let mut socket = socket(&desk).await;
    // Asking for every channel that would carry the other chats' messages
    // (refused), then for their own team's chat.
    let entity = desk.acme.entity.id;
    for channel in [
        format!("session:{}", desk.theirs.session),
        format!("session:{}", desk.loose.session),
        format!("entity:{entity}"),
    ] {
        assert_ne!(subscribe(&mut socket, &channel).await, "subscribed");
    }
    let mine = format!("session:{}", desk.mine.session);
    assert_eq!(subscribe(&mut socket, &mine).await, "subscribed");

    for session in [
        &desk.theirs.session,
        &desk.loose.session,
        &desk.mine.session,
    ] {
        desk.app
            .post(
                &format!("/chat/sessions/{session}/messages"),
                &desk.acme.key,
                json!({"body": format!("to {session}"), "senderType": "visitor"}),
            )
            .await
            .assert_status(201);
    }

    // The three were published in order: the first message frame is the
    // agent's team's, so the two before it went to no socket of theirs.
    let frame = socket.next_of("chat.message").await;
    assert_eq!(
        frame["data"]["sessionId"].as_str(),
        Some(desk.mine.session.as_str()),
        "{frame}"
    );
    desk.app.stop().await;
}
