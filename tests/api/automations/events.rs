//! Triggers on the events of a ticket's chat, SLA clocks, email and
//! rating: a chat's close runs them on each ticket opened from the chat,
//! an SLA warning or breach on its ticket (time passes with the test
//! clock), an incoming email on its ticket, a chat's rating on each ticket
//! opened from it; and the `close_chat` action, made by the automation.

use chrono::Duration;
use serde_json::{Value, json};

use super::{mark, patch, quiet, read, tags, ticket, trigger, triggers};
use crate::backend_tests;
use crate::csat::{open_chat, rate};
use crate::email::{deliver, first_message, imap_channel, opened};
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    close_chat_closes_the_chat_the_ticket_came_from,
    a_rules_chat_close_is_made_by_the_automation,
    a_chat_close_runs_the_triggers_on_each_ticket_of_the_chat,
    a_rules_chat_close_runs_the_chat_closed_triggers,
    an_sla_breach_runs_the_breach_triggers,
    an_sla_warning_runs_the_warning_triggers,
    a_dry_run_lists_a_chat_close_and_closes_nothing,
    an_incoming_email_runs_the_email_triggers,
    a_ticket_an_email_opened_runs_the_created_triggers,
    a_chats_rating_runs_the_rating_triggers_on_its_tickets,
    a_score_condition_reads_the_ratings_score,
    a_metric_condition_reads_the_breached_metric,
);

/// A chat session of `acme`, opened by its key; its id.
pub(super) async fn chat(app: &TestApp, acme: &TestCompany) -> String {
    let body = json!({"entityId": acme.entity.id, "visitorName": "Zoe",
                      "visitorEmail": "zoe@example.com"});
    let r = app.post("/chat/sessions", &acme.key, body).await;
    r.assert_status(201)["id"].as_str().expect("id").to_string()
}

/// A ticket opened from chat `chat`; its id.
pub(super) async fn ticket_from(app: &TestApp, acme: &TestCompany, chat: &str) -> String {
    let body = json!({"subject": "Follow-up", "entityId": acme.entity.id,
                      "chatSessionId": chat});
    let r = app.post("/tickets", &acme.key, body).await;
    r.assert_status(201)["id"].as_str().expect("id").to_string()
}

/// The chat's status as GET answers it.
async fn chat_status(app: &TestApp, acme: &TestCompany, chat: &str) -> Value {
    let r = app.get(&format!("/chat/sessions/{chat}"), &acme.key).await;
    r.assert_status(200)["status"].clone()
}

/// Closes the chat by the key.
async fn close(app: &TestApp, acme: &TestCompany, chat: &str) {
    let path = format!("/chat/sessions/{chat}");
    let r = app
        .patch(&path, &acme.key, json!({"status": "CLOSED"}))
        .await;
    r.assert_status(200);
}

/// A trigger on `ticket.updated` that closes the ticket's chat when
/// `all` holds; its id.
pub(super) async fn closing_rule(app: &TestApp, acme: &TestCompany, all: Value) -> String {
    let actions = json!([{"type": "close_chat"}]);
    trigger(app, acme, json!(["ticket.updated"]), all, actions).await
}

/// The condition of a ticket just put PENDING.
pub(super) fn pending() -> Value {
    json!([{"field": "status", "operator": "changed_to", "value": "PENDING"}])
}

async fn close_chat_closes_the_chat_the_ticket_came_from(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    closing_rule(&app, &acme, pending()).await;
    let chat = chat(&app, &acme).await;
    let id = ticket_from(&app, &acme, &chat).await;
    patch(&app, &acme, &id, json!({"status": "PENDING"})).await;
    assert_eq!(triggers(&app).await, 1);
    assert_eq!(chat_status(&app, &acme, &chat).await, "CLOSED");
}

async fn a_rules_chat_close_is_made_by_the_automation(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let rule = closing_rule(&app, &acme, pending()).await;
    let chat = chat(&app, &acme).await;
    let id = ticket_from(&app, &acme, &chat).await;
    patch(&app, &acme, &id, json!({"status": "PENDING"})).await;
    triggers(&app).await;
    let (actor,): (sqlx::types::Json<Value>,) = supportdesk::on_db!(&app.state.db, c => sqlx::query_as(
        "SELECT actor FROM events WHERE company_id = $1 AND name = 'chat.closed'")
        .bind(acme.company.id)
        .fetch_one(c)
        .await
        .expect("chat.closed"));
    assert_eq!(
        actor.0,
        json!({"type": "automation", "id": rule, "name": "Rule"})
    );
}

async fn a_chat_close_runs_the_triggers_on_each_ticket_of_the_chat(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    trigger(&app, &acme, json!(["chat.closed"]), json!([]), mark()).await;
    let chat = chat(&app, &acme).await;
    let first = ticket_from(&app, &acme, &chat).await;
    let second = ticket_from(&app, &acme, &chat).await;
    let other = ticket(&app, &acme, "not from the chat").await;
    close(&app, &acme, &chat).await;
    assert_eq!(triggers(&app).await, 2);
    let all = [first, second, other];
    let mut tagged = Vec::new();
    for id in &all {
        tagged.push(tags(&app, &acme, id).await);
    }
    assert_eq!(tagged, vec![json!(["hit"]), json!(["hit"]), json!([])]);
}

async fn a_rules_chat_close_runs_the_chat_closed_triggers(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    closing_rule(&app, &acme, pending()).await;
    trigger(&app, &acme, json!(["chat.closed"]), json!([]), mark()).await;
    let chat = chat(&app, &acme).await;
    let id = ticket_from(&app, &acme, &chat).await;
    patch(&app, &acme, &id, json!({"status": "PENDING"})).await;
    assert_eq!(triggers(&app).await, 2);
    assert_eq!(tags(&app, &acme, &id).await, json!(["hit"]));
}

/// A policy for MEDIUM tickets: a first response within 60 minutes and a
/// resolution within 240, warned 15 minutes ahead.
async fn hour_policy(app: &TestApp, acme: &TestCompany) {
    let policies = json!([{"name": "Everyone",
        "targets": {"MEDIUM": {"firstResponseMinutes": 60, "resolutionMinutes": 240}},
        "warnMinutes": 15}]);
    let r = app
        .put(
            "/settings/sla-policies",
            &acme.key,
            json!({"policies": policies}),
        )
        .await;
    r.assert_status(200);
}

/// The SLA pass at the test clock's time; how many warnings and breaches
/// it announced.
async fn sla_pass(app: &TestApp) -> usize {
    let signer = app.state.link_signer();
    supportdesk::sequences::sla_pass::run_pass(&app.state.db, app.state.clock.now(), &signer)
        .await
        .expect("sla pass")
}

async fn an_sla_breach_runs_the_breach_triggers(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    hour_policy(&app, &acme).await;
    let urgent = json!([{"type": "set_priority", "value": "URGENT"}]);
    trigger(&app, &acme, json!(["sla.breached"]), json!([]), urgent).await;
    let id = ticket(&app, &acme, "waiting").await;
    app.state.clock.advance(Duration::minutes(61));
    // The warning and the breach.
    assert_eq!(sla_pass(&app).await, 2);
    assert_eq!(triggers(&app).await, 1);
    assert_eq!(read(&app, &acme, &id).await["priority"], "URGENT");
}

async fn an_sla_warning_runs_the_warning_triggers(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    hour_policy(&app, &acme).await;
    trigger(&app, &acme, json!(["sla.warning"]), json!([]), mark()).await;
    let id = ticket(&app, &acme, "waiting").await;
    app.state.clock.advance(Duration::minutes(46));
    assert_eq!(sla_pass(&app).await, 1);
    assert_eq!(triggers(&app).await, 1);
    assert_eq!(tags(&app, &acme, &id).await, json!(["hit"]));
}

async fn a_dry_run_lists_a_chat_close_and_closes_nothing(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let rule = closing_rule(&app, &acme, json!([])).await;
    let chat = chat(&app, &acme).await;
    let id = ticket_from(&app, &acme, &chat).await;
    let r = app
        .post(
            &format!("/automations/{rule}/dry-run"),
            &acme.key,
            json!({}),
        )
        .await;
    let listed = r.assert_status(200)["data"].clone();
    assert_eq!(
        (listed[0]["ticketId"].clone(), listed[0]["changes"].clone()),
        (
            json!(id),
            json!({"chatStatus": {"from": "ACTIVE", "to": "CLOSED"}})
        )
    );
    assert_eq!(chat_status(&app, &acme, &chat).await, "ACTIVE");
}

async fn an_incoming_email_runs_the_email_triggers(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    trigger(&app, &acme, json!(["email.received"]), json!([]), mark()).await;
    let channel = imap_channel(&app, &acme).await;
    let raw = first_message("m1@shop.example", "");
    let id = opened(&deliver(&app, &acme, &channel, &raw).await);
    assert_eq!(triggers(&app).await, 1);
    assert_eq!(tags(&app, &acme, &id).await, json!(["hit"]));
}

async fn a_ticket_an_email_opened_runs_the_created_triggers(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    trigger(&app, &acme, json!(["ticket.created"]), json!([]), mark()).await;
    let channel = imap_channel(&app, &acme).await;
    let raw = first_message("m1@shop.example", "");
    let id = opened(&deliver(&app, &acme, &channel, &raw).await);
    assert_eq!(triggers(&app).await, 1);
    assert_eq!(tags(&app, &acme, &id).await, json!(["hit"]));
}

async fn a_chats_rating_runs_the_rating_triggers_on_its_tickets(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    trigger(&app, &acme, json!(["csat.submitted"]), json!([]), mark()).await;
    let (chat, token) = open_chat(&app, &acme).await;
    let id = ticket_from(&app, &acme, &chat).await;
    close(&app, &acme, &chat).await;
    rate(&app, Some(&token), json!({"score": 2}))
        .await
        .assert_status(201);
    assert_eq!(triggers(&app).await, 1);
    assert_eq!(tags(&app, &acme, &id).await, json!(["hit"]));
}

async fn a_score_condition_reads_the_ratings_score(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let unhappy = json!([{"field": "csatScore", "operator": "lte", "value": 2}]);
    trigger(&app, &acme, json!(["csat.submitted"]), unhappy, mark()).await;
    let mut tickets = Vec::new();
    for score in [2, 5] {
        let (chat, token) = open_chat(&app, &acme).await;
        tickets.push(ticket_from(&app, &acme, &chat).await);
        close(&app, &acme, &chat).await;
        rate(&app, Some(&token), json!({"score": score}))
            .await
            .assert_status(201);
    }
    assert_eq!(triggers(&app).await, 1);
    let mut tagged = Vec::new();
    for id in &tickets {
        tagged.push(tags(&app, &acme, id).await);
    }
    assert_eq!(tagged, vec![json!(["hit"]), json!([])]);
}

async fn a_metric_condition_reads_the_breached_metric(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    hour_policy(&app, &acme).await;
    let resolution = json!([{"field": "slaMetric", "operator": "is", "value": "resolution"}]);
    trigger(&app, &acme, json!(["sla.breached"]), resolution, mark()).await;
    let id = ticket(&app, &acme, "waiting").await;
    // The first response's breach: not the resolution's.
    app.state.clock.advance(Duration::minutes(61));
    sla_pass(&app).await;
    assert_eq!(triggers(&app).await, 0);
    app.state.clock.advance(Duration::minutes(180));
    sla_pass(&app).await;
    assert_eq!(triggers(&app).await, 1);
    assert_eq!(tags(&app, &acme, &id).await, json!(["hit"]));
}
