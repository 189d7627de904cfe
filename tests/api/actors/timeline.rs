//! Timeline entries and socket frames name who made the change: the key
//! for its own changes, the system for the passes' (SLA, escalation rules).

use chrono::Duration;
use serde_json::{Value, json};

use super::{fast_policy, high_ticket, key_actor, sla_pass, system_actor};
use crate::backend_tests;
use crate::chat::client::Client;
use crate::csat::open_chat;
use crate::support::{Backend, TestApp, TestCompany};
use crate::tickets::user;

backend_tests!(
    a_keys_changes_name_the_key_in_the_timeline,
    the_sla_pass_is_the_system_in_the_timeline,
    an_escalation_rule_is_the_system_in_the_timeline,
    a_ticket_frame_names_its_actor,
    a_chat_frame_names_its_actor,
);

/// The ticket's timeline entries of `kind`.
async fn entries(app: &TestApp, acme: &TestCompany, ticket: &str, kind: &str) -> Vec<Value> {
    let r = app
        .get(&format!("/tickets/{ticket}/activities"), &acme.key)
        .await;
    r.assert_status(200)["data"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|entry| entry["type"] == kind)
        .cloned()
        .collect()
}

async fn a_keys_changes_name_the_key_in_the_timeline(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = key_actor(&app, &acme).await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let ticket = high_ticket(&app, &acme).await;

    app.patch(
        &format!("/tickets/{ticket}"),
        &acme.key,
        json!({"status": "PENDING", "assignedToId": bob.id}),
    )
    .await
    .assert_status(200);

    for kind in ["created", "status_changed", "assignee_changed"] {
        let made = entries(&app, &acme, &ticket, kind).await;
        assert_eq!(made.len(), 1, "{kind}: {made:?}");
        assert_eq!(made[0]["actor"], key, "{kind}");
    }
}

async fn the_sla_pass_is_the_system_in_the_timeline(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    fast_policy(&app, &acme).await;
    let ticket = high_ticket(&app, &acme).await;

    app.state.clock.advance(Duration::minutes(35));
    sla_pass(&app).await;

    let breached = entries(&app, &acme, &ticket, "sla_breached").await;
    assert_eq!(breached.len(), 1, "{breached:?}");
    assert_eq!(breached[0]["actor"], system_actor());
}

async fn an_escalation_rule_is_the_system_in_the_timeline(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let ticket = high_ticket(&app, &acme).await;
    app.put(
        "/settings/escalation-rules",
        &acme.key,
        json!({"rules": [{"name": "High to Bob", "conditions": {"priorities": ["HIGH"]},
            "action": {"escalateToId": bob.id}}]}),
    )
    .await
    .assert_status(200);

    let fired = supportdesk::tickets::rules::run_pass_and_route(&(&app.state).into())
        .await
        .expect("pass");

    assert_eq!(fired, 1);
    let escalated = entries(&app, &acme, &ticket, "escalated").await;
    assert_eq!(escalated.len(), 1, "{escalated:?}");
    assert_eq!(escalated[0]["actor"], system_actor());
}

async fn a_ticket_frame_names_its_actor(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = key_actor(&app, &acme).await;
    let mut socket = Client::key(&app, &acme.key).await;
    socket
        .subscribe(&format!("tickets:{}", acme.entity.id))
        .await;

    high_ticket(&app, &acme).await;

    let frame = socket.next_of("ticket.created").await;
    assert_eq!(frame["data"]["actor"], key, "{frame}");
}

async fn a_chat_frame_names_its_actor(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = key_actor(&app, &acme).await;
    let (session, _) = open_chat(&app, &acme).await;
    let mut socket = Client::key(&app, &acme.key).await;
    socket
        .subscribe(&format!("entity:{}", acme.entity.id))
        .await;

    app.patch(
        &format!("/chat/sessions/{session}"),
        &acme.key,
        json!({"status": "CLOSED"}),
    )
    .await
    .assert_status(200);

    let frame = socket
        .next_where(|f| f["type"] == "chat.session" && f["data"]["status"] == "CLOSED")
        .await;
    assert_eq!(frame["actor"], key, "{frame}");
}
