//! The `agent:<userId>` socket channel: the `assignment` frames of the
//! chats given to or taken from one user, and who may subscribe to it.

use serde_json::json;
use uuid::Uuid;

use super::{chat, visitor};
use crate::backend_tests;
use crate::chat::agent;
use crate::chat::client::Client;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_visitor_cannot_subscribe_to_an_agent_channel,
    an_agent_channel_of_a_user_outside_the_company_is_not_found,
);

async fn a_visitor_cannot_subscribe_to_an_agent_channel(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let user = agent(&app, &acme, "Ann").await;
    let created = chat(&app, &acme).await;
    let mut widget = visitor(&app, &created).await;

    widget
        .send(json!({"type": "subscribe", "channel": format!("agent:{user}"), "id": 1}))
        .await;

    let refused = widget.next_of("error").await;
    assert_eq!(
        (refused["code"].as_str(), &refused["id"]),
        (Some("insufficient_scope"), &json!(1)),
        "{refused}"
    );
}

async fn an_agent_channel_of_a_user_outside_the_company_is_not_found(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let globex = app.company().await;
    let theirs: Uuid = agent(&app, &globex, "Gil").await;
    let mut console = Client::key(&app, &acme.key).await;

    console
        .send(json!({"type": "subscribe", "channel": format!("agent:{theirs}"), "id": 1}))
        .await;

    let refused = console.next_of("error").await;
    assert_eq!(
        (refused["code"].as_str(), &refused["id"]),
        (Some("not_found"), &json!(1)),
        "{refused}"
    );
}
