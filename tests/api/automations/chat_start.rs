//! Triggers on a chat that just started (`chat.started`): they read and
//! change the chat itself (it has no ticket yet), their changes reach the
//! chat's sockets, and a rule naming the event may name only what a chat
//! has.

use serde_json::{Value, json};

use super::events::chat;
use super::{live, quiet, triggers};
use crate::backend_tests;
use crate::chat::client::Client;
use crate::support::{Backend, TestApp, TestCompany, assert_invalid};

backend_tests!(
    a_chat_start_runs_the_started_triggers_on_the_chat,
    a_started_trigger_reads_the_chats_fields,
    a_started_triggers_tags_reach_the_agents_socket,
    a_started_trigger_can_close_the_chat,
    a_started_trigger_takes_only_what_a_chat_has,
);

/// A `chat.started` trigger with `all` conditions and `actions`.
async fn started_rule(app: &TestApp, acme: &TestCompany, all: Value, actions: Value) {
    super::trigger(app, acme, json!(["chat.started"]), all, actions).await;
}

/// Tags the chat `vip`.
fn vip() -> Value {
    json!([{"type": "add_tags", "value": ["vip"]}])
}

/// The chat as GET answers it.
async fn read_chat(app: &TestApp, acme: &TestCompany, id: &str) -> Value {
    let r = app.get(&format!("/chat/sessions/{id}"), &acme.key).await;
    r.assert_status(200).clone()
}

async fn a_chat_start_runs_the_started_triggers_on_the_chat(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    started_rule(&app, &acme, json!([]), vip()).await;
    let id = chat(&app, &acme).await;
    assert_eq!(triggers(&app).await, 1);
    assert_eq!(read_chat(&app, &acme, &id).await["tags"], json!(["vip"]));
}

async fn a_started_trigger_reads_the_chats_fields(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let zoe = json!([{"field": "visitorEmail", "operator": "is", "value": "zoe@example.com"}]);
    started_rule(&app, &acme, zoe, vip()).await;
    let hers = chat(&app, &acme).await;
    let body = json!({"entityId": acme.entity.id, "visitorName": "Max",
                      "visitorEmail": "max@example.com"});
    let r = app.post("/chat/sessions", &acme.key, body).await;
    let his = r.assert_status(201)["id"].as_str().expect("id").to_string();
    assert_eq!(triggers(&app).await, 1);
    let tags = (
        read_chat(&app, &acme, &hers).await["tags"].clone(),
        read_chat(&app, &acme, &his).await["tags"].clone(),
    );
    assert_eq!(tags, (json!(["vip"]), json!([])));
}

async fn a_started_triggers_tags_reach_the_agents_socket(backend: Backend) {
    let app = live(backend).await;
    let acme = app.company().await;
    started_rule(&app, &acme, json!([]), vip()).await;
    let mut agent = Client::key(&app, &acme.key).await;
    agent.subscribe(&format!("entity:{}", acme.entity.id)).await;
    let id = chat(&app, &acme).await;
    triggers(&app).await;
    let frame = agent
        .next_where(|f| f["type"] == "chat.session" && f["data"]["tags"] == json!(["vip"]))
        .await;
    assert_eq!(
        (frame["data"]["id"].clone(), frame["actor"]["type"].clone()),
        (json!(id), json!("automation"))
    );
}

async fn a_started_trigger_can_close_the_chat(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    started_rule(&app, &acme, json!([]), json!([{"type": "close_chat"}])).await;
    let id = chat(&app, &acme).await;
    triggers(&app).await;
    assert_eq!(read_chat(&app, &acme, &id).await["status"], "CLOSED");
}

async fn a_started_trigger_takes_only_what_a_chat_has(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let body = json!({"name": "Rule", "kind": "trigger",
        "events": ["chat.started", "ticket.created"],
        "conditions": {"all": [{"field": "status", "operator": "is", "value": "OPEN"}]},
        "actions": [{"type": "set_priority", "value": "HIGH"}]});
    let r = app.post("/automations", &acme.key, body).await;
    assert_invalid(
        &r,
        &["events", "conditions.all[0].field", "actions[0].type"],
    );
}
