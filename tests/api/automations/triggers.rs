//! Triggers run on every committed change, whoever made it, as the
//! automation; they see each other's changes, never re-run on their own,
//! stop a loop at the depth limit, and run once with two nodes.

use reqwest::Method;
use serde_json::{Value, json};

use super::{fired_events, mark, patch, quiet, read, tags, ticket, timeline, trigger, triggers};
use crate::agents::{send, signed_in};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    a_change_by_a_key_runs_the_triggers,
    a_change_by_a_signed_in_agent_runs_the_triggers,
    a_comment_runs_the_comment_triggers,
    a_rules_change_is_made_by_the_automation,
    a_change_by_another_rule_runs_the_triggers,
    later_rules_see_the_changes_of_earlier_ones,
    a_rule_never_runs_on_its_own_change,
    a_loop_of_two_rules_stops_at_the_depth_limit,
    two_nodes_run_a_changes_triggers_once,
);

/// The actor of the company's latest `ticket.updated`.
async fn last_update_actor(app: &TestApp, acme: &TestCompany) -> Value {
    let (actor,): (sqlx::types::Json<Value>,) = supportdesk::on_db!(&app.state.db, c => sqlx::query_as(
        "SELECT actor FROM events WHERE company_id = $1 AND name = 'ticket.updated' \
         ORDER BY created_at DESC, id DESC LIMIT 1")
        .bind(acme.company.id)
        .fetch_one(c)
        .await
        .expect("event"));
    actor.0
}

async fn a_change_by_a_key_runs_the_triggers(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    trigger(&app, &acme, json!(["ticket.updated"]), json!([]), mark()).await;
    let id = ticket(&app, &acme, "a").await;
    patch(&app, &acme, &id, json!({"status": "PENDING"})).await;
    assert_eq!(triggers(&app).await, 1);
    assert_eq!(tags(&app, &acme, &id).await, json!(["hit"]));
}

async fn a_change_by_a_signed_in_agent_runs_the_triggers(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    trigger(&app, &acme, json!(["ticket.updated"]), json!([]), mark()).await;
    let browser = signed_in(&app, &acme, "ann@example.com", "agent").await;
    let id = ticket(&app, &acme, "a").await;
    let path = format!("/tickets/{id}");
    send(
        &app,
        &browser,
        Method::PATCH,
        &path,
        json!({"status": "PENDING"}),
    )
    .await
    .assert_status(200);
    assert_eq!(triggers(&app).await, 1);
    assert_eq!(tags(&app, &acme, &id).await, json!(["hit"]));
}

async fn a_comment_runs_the_comment_triggers(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let public = json!([{"field": "commentInternal", "operator": "is", "value": false}]);
    trigger(&app, &acme, json!(["comment.created"]), public, mark()).await;
    let replied = ticket(&app, &acme, "a").await;
    let noted = ticket(&app, &acme, "b").await;
    app.post(
        &format!("/tickets/{replied}/comments"),
        &acme.key,
        json!({"body": "Hi"}),
    )
    .await
    .assert_status(201);
    app.post(
        &format!("/tickets/{noted}/comments"),
        &acme.key,
        json!({"body": "Psst", "isInternal": true}),
    )
    .await
    .assert_status(201);
    triggers(&app).await;
    let got = (
        tags(&app, &acme, &replied).await,
        tags(&app, &acme, &noted).await,
    );
    assert_eq!(got, (json!(["hit"]), json!([])));
}

async fn a_rules_change_is_made_by_the_automation(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let rule = trigger(
        &app,
        &acme,
        json!(["ticket.created"]),
        json!([]),
        json!([{"type": "set_priority", "value": "HIGH"}]),
    )
    .await;
    let id = ticket(&app, &acme, "a").await;
    triggers(&app).await;
    let actor = json!({"type": "automation", "id": rule, "name": "Rule"});
    let entries = timeline(&app, &acme, &id).await;
    let change = entries
        .iter()
        .find(|e| e["type"] == "priority_changed")
        .expect("the rule's entry");
    assert_eq!(change["actor"], actor);
    assert_eq!(last_update_actor(&app, &acme).await, actor);
    assert_eq!(fired_events(&app, &acme).await, 1);
}

async fn a_change_by_another_rule_runs_the_triggers(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    trigger(
        &app,
        &acme,
        json!(["ticket.created"]),
        json!([]),
        json!([{"type": "set_priority", "value": "HIGH"}]),
    )
    .await;
    let high = json!([{"field": "priority", "operator": "changed_to", "value": "HIGH"}]);
    trigger(&app, &acme, json!(["ticket.updated"]), high, mark()).await;
    let id = ticket(&app, &acme, "a").await;
    assert_eq!(triggers(&app).await, 2);
    let t = read(&app, &acme, &id).await;
    assert_eq!(
        (&t["priority"], &t["tags"]),
        (&json!("HIGH"), &json!(["hit"]))
    );
}

async fn later_rules_see_the_changes_of_earlier_ones(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    trigger(
        &app,
        &acme,
        json!(["ticket.created"]),
        json!([]),
        json!([{"type": "set_priority", "value": "HIGH"}]),
    )
    .await;
    let high = json!([{"field": "priority", "operator": "is", "value": "HIGH"}]);
    trigger(&app, &acme, json!(["ticket.created"]), high, mark()).await;
    let id = ticket(&app, &acme, "a").await;
    triggers(&app).await;
    assert_eq!(tags(&app, &acme, &id).await, json!(["hit"]));
}

async fn a_rule_never_runs_on_its_own_change(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    // It runs on every update, and its own tag is one.
    trigger(&app, &acme, json!(["ticket.updated"]), json!([]), mark()).await;
    let id = ticket(&app, &acme, "a").await;
    patch(&app, &acme, &id, json!({"priority": "HIGH"})).await;
    triggers(&app).await;
    triggers(&app).await;
    assert_eq!(fired_events(&app, &acme).await, 1);
}

async fn a_loop_of_two_rules_stops_at_the_depth_limit(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let to = |value: &str| json!([{"field": "priority", "operator": "changed_to", "value": value}]);
    let set = |value: &str| json!([{"type": "set_priority", "value": value}]);
    trigger(
        &app,
        &acme,
        json!(["ticket.updated"]),
        to("HIGH"),
        set("LOW"),
    )
    .await;
    trigger(
        &app,
        &acme,
        json!(["ticket.updated"]),
        to("LOW"),
        set("HIGH"),
    )
    .await;
    let id = ticket(&app, &acme, "a").await;
    patch(&app, &acme, &id, json!({"priority": "HIGH"})).await;
    let depth = supportdesk::automations::engine::MAX_DEPTH;
    assert_eq!(triggers(&app).await, depth);
    let entries = timeline(&app, &acme, &id).await;
    let stops: Vec<&Value> = entries
        .iter()
        .filter(|e| e["type"] == "automation_stopped")
        .collect();
    assert_eq!(stops.len(), 1, "{entries:?}");
    assert_eq!(stops[0]["details"]["depth"], json!(depth));
    assert!(
        stops[0]["details"]["reason"]
            .as_str()
            .expect("reason")
            .contains("stops")
    );
}

async fn two_nodes_run_a_changes_triggers_once(backend: Backend) {
    let app = quiet(backend).await;
    let peer = app.spawn_peer_with(|c| c.run_workers = false).await;
    let acme = app.company().await;
    trigger(&app, &acme, json!(["ticket.created"]), json!([]), mark()).await;
    for n in 0..5 {
        ticket(&app, &acme, &format!("t{n}")).await;
    }
    let (here, there) = tokio::join!(triggers(&app), triggers(&peer));
    assert_eq!(here + there, 5);
    assert_eq!(fired_events(&app, &acme).await, 5);
    peer.stop().await;
}
