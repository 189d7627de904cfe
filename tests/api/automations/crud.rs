//! The rules' API: written and read back, refused with every problem,
//! behind their scopes.

use serde_json::json;
use supportdesk::auth::{Mode, Scope, ScopeSet};

use super::{automation, quiet};
use crate::backend_tests;
use crate::support::{Backend, assert_invalid};

backend_tests!(
    an_automation_reads_back_as_written_in_its_place,
    a_bad_rule_is_400_listing_every_problem,
    a_channel_outside_the_tickets_channels_is_refused,
    automations_need_their_scopes,
);

async fn an_automation_reads_back_as_written_in_its_place(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let body = json!({
        "name": "Escalate VIP", "kind": "trigger", "events": ["ticket.created"],
        "conditions": {"all": [{"field": "tags", "operator": "contains", "value": "VIP"}],
                       "any": [{"field": "priority", "operator": "is", "value": "HIGH"}]},
        "actions": [{"type": "set_priority", "value": "URGENT"}],
        "position": 5,
    });
    let late = automation(&app, &acme, body).await;
    let early = automation(
        &app,
        &acme,
        json!({"name": "Stale", "kind": "timed", "position": 1,
               "conditions": {"all": [{"field": "minutesSinceUpdated", "operator": "gte", "value": 60}]},
               "actions": [{"type": "add_note", "value": "Still waiting"}]}),
    )
    .await;
    let r = app.get(&format!("/automations/{late}"), &acme.key).await;
    let read = r.assert_status(200);
    assert_eq!(
        read["conditions"]["all"][0]["value"], "vip",
        "tags normalised"
    );
    assert_eq!(
        read["actions"],
        json!([{"type": "set_priority", "value": "URGENT"}])
    );
    assert_eq!(read["enabled"], true);
    let list = app.get("/automations", &acme.key).await;
    let ids: Vec<&str> = list.assert_status(200)["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|a| a["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, [early.as_str(), late.as_str()]);
}

async fn a_bad_rule_is_400_listing_every_problem(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let r = app
        .post(
            "/automations",
            &acme.key,
            json!({"name": "Bad", "kind": "trigger", "events": ["ticket.exploded"],
                   "conditions": {"all": [
                       {"field": "mood", "operator": "is", "value": 1},
                       {"field": "status", "operator": "gte", "value": "OPEN"},
                   ]},
                   "actions": [{"type": "set_status", "value": "DONE"}, {"type": "snooze", "value": 5}]}),
        )
        .await;
    assert_invalid(
        &r,
        &[
            "events",
            "conditions.all[0].field",
            "conditions.all[1].operator",
            "actions[0]",
            "actions[1]",
        ],
    );
    let listed = app.get("/automations", &acme.key).await;
    assert_eq!(listed.assert_status(200)["data"], json!([]));
}

async fn a_channel_outside_the_tickets_channels_is_refused(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let r = app
        .post(
            "/automations",
            &acme.key,
            json!({"name": "By fax", "kind": "trigger", "events": ["ticket.created"],
                   "conditions": {"all": [{"field": "channel", "operator": "is", "value": "fax"}]},
                   "actions": [{"type": "add_tags", "value": ["fax"]}]}),
        )
        .await;
    assert_invalid(&r, &["conditions.all[0].value"]);
    let listed = app.get("/automations", &acme.key).await;
    assert_eq!(listed.assert_status(200)["data"], json!([]));
}

async fn automations_need_their_scopes(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let readonly = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::from_scopes([Scope::AutomationsRead]),
        )
        .await;
    app.get("/automations", &readonly).await.assert_status(200);
    let r = app
        .post(
            "/automations",
            &readonly,
            json!({"name": "X", "kind": "trigger", "events": ["ticket.created"],
                   "actions": [{"type": "add_tags", "value": ["x"]}]}),
        )
        .await;
    r.assert_error(403, "insufficient_scope");
    let none = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::from_scopes([Scope::TicketsRead]),
        )
        .await;
    app.get("/automations", &none)
        .await
        .assert_error(403, "insufficient_scope");
}
