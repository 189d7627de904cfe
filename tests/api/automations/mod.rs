//! Automations: the rules' API, each condition operator and action, the
//! conditions on the ticket's contact, organisation and business hours, the
//! triggers (on changes by a key, an agent and another rule; loop-safe;
//! on a chat's close and an SLA warning or breach), the `close_chat`
//! action (announced to the chat's sockets and asking for a rating as
//! any close does), timed automations (once per time their condition holds; one
//! node at a time) and the dry run. The passes run when a test runs them
//! (workers off), at the test clock's time.

mod actions;
mod chat_close;
mod chat_start;
mod conditions;
mod crud;
mod events;
mod parties;
mod ratings;
mod timed;
mod triggers;

use serde_json::{Value, json};

use crate::support::{Backend, TestApp, TestCompany};

/// An app whose passes run only when the test runs them.
async fn quiet(backend: Backend) -> TestApp {
    TestApp::spawn_with(backend, |c| c.run_workers = false).await
}

/// An app with its workers (the sockets' fan-out among them) whose
/// automation passes run only when the test runs them (the worker's first
/// pass, at start, finds no rule; the next is an hour away).
async fn live(backend: Backend) -> TestApp {
    TestApp::spawn_with(backend, |c| {
        c.rules_interval = std::time::Duration::from_secs(3600)
    })
    .await
}

/// A new automation of `acme` from `body`; its id.
async fn automation(app: &TestApp, acme: &TestCompany, body: Value) -> String {
    let r = app.post("/automations", &acme.key, body).await;
    r.assert_status(201)["id"].as_str().expect("id").to_string()
}

/// A trigger on `events` with `all` conditions and `actions`; its id.
async fn trigger(
    app: &TestApp,
    acme: &TestCompany,
    events: Value,
    all: Value,
    actions: Value,
) -> String {
    let body = json!({"name": "Rule", "kind": "trigger", "events": events,
                      "conditions": {"all": all}, "actions": actions});
    automation(app, acme, body).await
}

/// A new ticket of `acme` (by its key); its id.
async fn ticket(app: &TestApp, acme: &TestCompany, subject: &str) -> String {
    let r = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": subject, "entityId": acme.entity.id,
                   "visitorEmail": "vic@example.com"}),
        )
        .await;
    r.assert_status(201)["id"].as_str().expect("id").to_string()
}

/// The ticket as GET answers it.
async fn read(app: &TestApp, acme: &TestCompany, id: &str) -> Value {
    app.get(&format!("/tickets/{id}"), &acme.key)
        .await
        .assert_status(200)
        .clone()
}

/// PATCHes the ticket with `body` by the key.
async fn patch(app: &TestApp, acme: &TestCompany, id: &str, body: Value) {
    app.patch(&format!("/tickets/{id}"), &acme.key, body)
        .await
        .assert_status(200);
}

/// The trigger pass and its after-commit work, as the worker runs them;
/// how many times a rule fired.
async fn triggers(app: &TestApp) -> usize {
    let pass = supportdesk::sequences::automations::run_triggers(
        &app.state.db,
        app.state.clock.now(),
        &app.state.link_signer(),
    )
    .await
    .expect("trigger pass");
    supportdesk::sequences::automations::announce(&app.state, &pass).await;
    pass.fired
}

/// The timed pass and its after-commit work, as the worker runs them; how
/// many tickets it changed.
async fn timed_pass(app: &TestApp) -> usize {
    let pass = supportdesk::sequences::automations::run_timed(
        &app.state.db,
        app.state.clock.now(),
        &app.state.link_signer(),
    )
    .await
    .expect("timed pass");
    supportdesk::sequences::automations::announce(&app.state, &pass).await;
    pass.fired
}

/// The ticket's tags.
async fn tags(app: &TestApp, acme: &TestCompany, id: &str) -> Value {
    read(app, acme, id).await["tags"].clone()
}

/// The ticket's timeline entries.
async fn timeline(app: &TestApp, acme: &TestCompany, id: &str) -> Vec<Value> {
    let r = app
        .get(&format!("/tickets/{id}/activities"), &acme.key)
        .await;
    r.assert_status(200)["data"]
        .as_array()
        .expect("entries")
        .clone()
}

/// How many `automation.fired` events the company has.
async fn fired_events(app: &TestApp, acme: &TestCompany) -> i64 {
    supportdesk::on_db!(&app.state.db, c => sqlx::query_scalar(
        "SELECT COUNT(*) FROM events WHERE company_id = $1 AND name = 'automation.fired'")
        .bind(acme.company.id)
        .fetch_one(c)
        .await
        .expect("events"))
}

/// An action that marks a ticket it ran on.
fn mark() -> Value {
    json!([{"type": "add_tags", "value": ["hit"]}])
}
