//! Timed automations fire once per time their condition comes to hold,
//! one node at a time, to the second they come due (after the last
//! customer reply too), however many older tickets do not match; a dry
//! run lists what the pass then changes (however many older tickets do
//! not match) and writes nothing.

use chrono::Duration;
use serde_json::{Value, json};

use super::{automation, fired_events, patch, quiet, read, ticket, timed_pass};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    a_timed_automation_fires_once_and_again_only_after_its_condition_was_false,
    two_nodes_fire_a_timed_automation_once,
    a_dry_run_lists_what_the_pass_then_changes_and_writes_nothing,
    a_customer_reply_rule_fires_at_its_minute_after_the_last_reply,
    a_pass_reaches_a_due_ticket_behind_a_page_of_others,
    a_dry_run_lists_a_due_ticket_behind_a_page_of_others,
);

/// A timed automation on open tickets created an hour ago or more.
async fn hourly(app: &TestApp, acme: &TestCompany, actions: Value) -> String {
    automation(
        app,
        acme,
        json!({"name": "Nudge", "kind": "timed",
               "conditions": {"all": [
                   {"field": "minutesSinceCreated", "operator": "gte", "value": 60},
                   {"field": "status", "operator": "is", "value": "OPEN"},
               ]},
               "actions": actions}),
    )
    .await
}

async fn a_timed_automation_fires_once_and_again_only_after_its_condition_was_false(
    backend: Backend,
) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    hourly(
        &app,
        &acme,
        json!([{"type": "add_note", "value": "Any news?"}]),
    )
    .await;
    let id = ticket(&app, &acme, "a").await;
    app.state.clock.advance(Duration::minutes(59));
    assert_eq!(timed_pass(&app).await, 0, "not yet");
    app.state.clock.advance(Duration::minutes(1));
    assert_eq!(timed_pass(&app).await, 1, "due to the minute");
    assert_eq!(timed_pass(&app).await, 0, "once while it holds");
    patch(&app, &acme, &id, json!({"status": "PENDING"})).await;
    assert_eq!(timed_pass(&app).await, 0, "not while it does not hold");
    patch(&app, &acme, &id, json!({"status": "OPEN"})).await;
    assert_eq!(timed_pass(&app).await, 1, "again once it holds again");
    assert_eq!(fired_events(&app, &acme).await, 2);
}

async fn two_nodes_fire_a_timed_automation_once(backend: Backend) {
    let app = quiet(backend).await;
    let peer = app.spawn_peer_with(|c| c.run_workers = false).await;
    let acme = app.company().await;
    hourly(
        &app,
        &acme,
        json!([{"type": "add_tags", "value": ["nudged"]}]),
    )
    .await;
    ticket(&app, &acme, "a").await;
    app.state.clock.advance(Duration::minutes(61));
    peer.state.clock.advance(Duration::minutes(61));
    let (here, there) = tokio::join!(timed_pass(&app), timed_pass(&peer));
    assert_eq!(here + there, 1);
    assert_eq!(timed_pass(&peer).await + timed_pass(&app).await, 0);
    assert_eq!(fired_events(&app, &acme).await, 1);
    peer.stop().await;
}

async fn a_dry_run_lists_what_the_pass_then_changes_and_writes_nothing(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let rule = hourly(
        &app,
        &acme,
        json!([{"type": "set_priority", "value": "HIGH"}, {"type": "add_tags", "value": ["nudged"]}]),
    )
    .await;
    let due = ticket(&app, &acme, "due").await;
    let pending = ticket(&app, &acme, "pending").await;
    patch(&app, &acme, &pending, json!({"status": "PENDING"})).await;
    app.state.clock.advance(Duration::minutes(61));
    let young = ticket(&app, &acme, "young").await;
    let tickets = [&due, &pending, &young];
    let mut before = Vec::new();
    for id in tickets {
        before.push(state(&app, &acme, id).await);
    }
    let r = app
        .post(
            &format!("/automations/{rule}/dry-run"),
            &acme.key,
            json!({}),
        )
        .await;
    let listed = r.assert_status(200)["data"].clone();
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed[0]["ticketId"], json!(due));
    assert_eq!(
        listed[0]["changes"]["priority"],
        json!({"from": "MEDIUM", "to": "HIGH"})
    );
    assert_eq!(listed[0]["tagsAdded"], json!(["nudged"]));
    for (id, was) in tickets.into_iter().zip(&before) {
        assert_eq!(
            &state(&app, &acme, id).await,
            was,
            "unchanged by the dry run"
        );
    }
    assert_eq!(fired_events(&app, &acme).await, 0);
    assert_eq!(timed_pass(&app).await, 1);
    let mut changed = Vec::new();
    for (id, was) in tickets.into_iter().zip(&before) {
        if &state(&app, &acme, id).await != was {
            changed.push(id.clone());
        }
    }
    assert_eq!(changed, [due]);
}

/// What a change would touch: the version, priority and tags.
async fn state(app: &TestApp, acme: &TestCompany, id: &str) -> Value {
    let t = read(app, acme, id).await;
    json!([t["version"], t["priority"], t["tags"]])
}

/// Tags a ticket `nudged`.
fn nudge() -> Value {
    json!([{"type": "add_tags", "value": ["nudged"]}])
}

async fn a_customer_reply_rule_fires_at_its_minute_after_the_last_reply(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let waiting = json!([{"field": "minutesSinceCustomerReply", "operator": "gte", "value": 30}]);
    let body = json!({"name": "Chase", "kind": "timed", "conditions": {"all": waiting},
                      "actions": nudge()});
    automation(&app, &acme, body).await;
    let id = ticket(&app, &acme, "a").await;
    app.state.clock.advance(Duration::minutes(45));
    assert_eq!(timed_pass(&app).await, 0, "no reply yet");
    let reply = json!({"body": "Any news?", "authorType": "customer"});
    app.post(&format!("/tickets/{id}/comments"), &acme.key, reply)
        .await
        .assert_status(201);
    app.state
        .clock
        .advance(Duration::minutes(30) - Duration::seconds(1));
    assert_eq!(timed_pass(&app).await, 0, "a second early");
    app.state.clock.advance(Duration::seconds(1));
    assert_eq!(timed_pass(&app).await, 1, "due to the second");
}

async fn a_pass_reaches_a_due_ticket_behind_a_page_of_others(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let (_, id) = behind_a_page(&app, &acme).await;
    assert_eq!(timed_pass(&app).await, 1);
    assert_eq!(read(&app, &acme, &id).await["tags"], json!(["nudged"]));
}

async fn a_dry_run_lists_a_due_ticket_behind_a_page_of_others(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let (rule, id) = behind_a_page(&app, &acme).await;
    let r = app
        .post(
            &format!("/automations/{rule}/dry-run"),
            &acme.key,
            json!({}),
        )
        .await;
    let listed = r.assert_status(200)["data"].clone();
    let ids: Vec<&Value> = listed
        .as_array()
        .expect("data")
        .iter()
        .map(|w| &w["ticketId"])
        .collect();
    assert_eq!(ids, [&json!(id)]);
}

/// A timed rule that tags `nudged` the tickets an hour old named `late`,
/// a full page of older tickets it passes over (due by their age, which
/// the due query reads, but of another subject, which it does not), then
/// one it fires on, an hour later: the rule's id and that ticket's.
async fn behind_a_page(app: &TestApp, acme: &TestCompany) -> (String, String) {
    let late = json!([
        {"field": "minutesSinceCreated", "operator": "gte", "value": 60},
        {"field": "subject", "operator": "is", "value": "late"},
    ]);
    let body = json!({"name": "Nudge", "kind": "timed", "conditions": {"all": late},
                      "actions": nudge()});
    let rule = automation(app, acme, body).await;
    let page = usize::try_from(supportdesk::automations::timed::BATCH).expect("size");
    for _ in 0..page.div_ceil(10) {
        futures::future::join_all((0..10).map(|_| ticket(app, acme, "older"))).await;
    }
    app.state.clock.advance(Duration::seconds(1));
    let id = ticket(app, acme, "late").await;
    app.state.clock.advance(Duration::minutes(61));
    (rule, id)
}
