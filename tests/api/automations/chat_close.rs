//! A rule's `close_chat`, once its change commits, is announced as a close
//! through the API is: `chat.session` on the chat's and its entity's
//! channels, and the rating request of the entity's CSAT setting.

use serde_json::json;

use super::events::{closing_rule, pending, ticket_from};
use super::{live, patch, triggers};
use crate::backend_tests;
use crate::chat::client::Client;
use crate::csat::{open_chat, set_csat};
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    a_rules_chat_close_reaches_the_visitors_socket,
    a_rules_chat_close_reaches_the_agents_socket,
    a_rules_chat_close_asks_the_visitor_for_a_rating,
);

/// A widget chat with a ticket opened from it, and a rule that closes the
/// chat when the ticket is put PENDING: the chat's id, its visitor token
/// and the ticket's id.
async fn chat_with_rule(app: &TestApp, acme: &TestCompany) -> (String, String, String) {
    closing_rule(app, acme, pending()).await;
    let (chat, token) = open_chat(app, acme).await;
    let ticket = ticket_from(app, acme, &chat).await;
    (chat, token, ticket)
}

async fn a_rules_chat_close_reaches_the_visitors_socket(backend: Backend) {
    let app = live(backend).await;
    let acme = app.company().await;
    let (chat, token, ticket) = chat_with_rule(&app, &acme).await;
    let mut visitor = Client::token(&app, &token).await;
    visitor.subscribe(&format!("session:{chat}")).await;
    patch(&app, &acme, &ticket, json!({"status": "PENDING"})).await;
    triggers(&app).await;
    let frame = visitor
        .next_where(|f| f["type"] == "chat.session" && f["data"]["status"] == "CLOSED")
        .await;
    assert_eq!(frame["data"]["id"], chat.as_str());
}

async fn a_rules_chat_close_reaches_the_agents_socket(backend: Backend) {
    let app = live(backend).await;
    let acme = app.company().await;
    let (chat, _, ticket) = chat_with_rule(&app, &acme).await;
    let mut agent = Client::key(&app, &acme.key).await;
    agent.subscribe(&format!("entity:{}", acme.entity.id)).await;
    patch(&app, &acme, &ticket, json!({"status": "PENDING"})).await;
    triggers(&app).await;
    let frame = agent
        .next_where(|f| f["type"] == "chat.session" && f["data"]["status"] == "CLOSED")
        .await;
    assert_eq!(
        (frame["data"]["id"].clone(), frame["actor"]["type"].clone()),
        (json!(chat), json!("automation"))
    );
}

async fn a_rules_chat_close_asks_the_visitor_for_a_rating(backend: Backend) {
    let app = live(backend).await;
    let acme = app.company().await;
    set_csat(&app, &acme, "auto").await;
    let (chat, token, ticket) = chat_with_rule(&app, &acme).await;
    let mut visitor = Client::token(&app, &token).await;
    visitor.subscribe(&format!("session:{chat}")).await;
    patch(&app, &acme, &ticket, json!({"status": "PENDING"})).await;
    triggers(&app).await;
    let frame = visitor.next_of("rating_requested").await;
    assert_eq!(frame["data"]["chatSessionId"], chat.as_str());
}
