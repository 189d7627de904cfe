//! Team-scoped visibility follows the agent onto their personal key: its
//! requests and sockets see what the agent's session sees, and a socket's
//! subscription to a ticket channel, which carries every team's tickets,
//! is refused with an error frame rather than filtered.

use reqwest::Method;
use serde_json::{Value, json};

use super::team_desk::Desk;
use crate::backend_tests;
use crate::chat::client::Client;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_limited_agents_ticket_channel_subscription_is_refused,
    a_limited_agents_personal_key_reads_no_other_teams_ticket,
    a_limited_agents_personal_key_socket_is_refused_a_ticket_channel,
);

/// An app whose workers send no frames of their own.
async fn quiet(backend: Backend) -> TestApp {
    TestApp::spawn_with(backend, |c| c.run_workers = false).await
}

/// A personal key of the limited agent, with their role's read scopes.
async fn personal_key(desk: &Desk) -> String {
    let body = json!({"name": "Script", "scopes": ["tickets:read", "chat:read"]});
    let r = desk.limited(Method::POST, "/auth/keys", Some(body)).await;
    r.assert_status(201)["key"]
        .as_str()
        .expect("key")
        .to_owned()
}

/// The error frame answering a subscription to `channel`.
async fn refusal(socket: &mut Client, channel: &str) -> Value {
    socket
        .send(json!({"type": "subscribe", "id": "s1", "channel": channel}))
        .await;
    socket
        .next_where(|frame| frame["type"] == "subscribed" || frame["type"] == "error")
        .await
}

async fn a_limited_agents_ticket_channel_subscription_is_refused(backend: Backend) {
    let desk = Desk::open(quiet(backend).await).await;
    let headers = [
        ("Cookie", desk.limited.cookie.as_str()),
        ("Origin", desk.app.address.as_str()),
    ];
    let mut socket = Client::try_with_headers(&desk.app, &headers)
        .await
        .expect("socket opens");

    let channel = format!("tickets:{}", desk.acme.entity.id);
    let reply = refusal(&mut socket, &channel).await;

    assert_eq!(
        (&reply["type"], &reply["code"]),
        (&json!("error"), &json!("insufficient_scope")),
        "{reply}"
    );
    desk.app.stop().await;
}

async fn a_limited_agents_personal_key_reads_no_other_teams_ticket(backend: Backend) {
    let desk = Desk::open(quiet(backend).await).await;
    let key = personal_key(&desk).await;

    let r = desk
        .app
        .get(&format!("/tickets/{}", desk.theirs.ticket), &key)
        .await;

    r.assert_error(404, "not_found");
    desk.app.stop().await;
}

async fn a_limited_agents_personal_key_socket_is_refused_a_ticket_channel(backend: Backend) {
    let desk = Desk::open(quiet(backend).await).await;
    let key = personal_key(&desk).await;
    let mut socket = Client::key(&desk.app, &key).await;

    let channel = format!("tickets:{}", desk.acme.entity.id);
    let reply = refusal(&mut socket, &channel).await;

    assert_eq!(
        (&reply["type"], &reply["code"]),
        (&json!("error"), &json!("insufficient_scope")),
        "{reply}"
    );
    desk.app.stop().await;
}
