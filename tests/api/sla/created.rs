//! The policy of a new ticket, chosen from each node's cached policies and
//! calendars: a change on one node applies to the next create on every
//! node; a custom field condition is checked against the values the ticket
//! is created with. And the `sla.warned` times of a ticket.

use chrono::{Datelike, Duration};
use serde_json::{Value, json};
use supportdesk::auth::{Mode, Tenant};
use supportdesk::snapshots::SNAPSHOT_TTL;

use super::tickets::{instant, pass, plus, quiet, ticket};
use super::{create_calendar, put_policies};
use crate::backend_tests;
use crate::chat::client::Client;
use crate::chat::id_of;
use crate::outbound::support::{Receiver, create_webhook, drive_until, settle};
use crate::support::{Backend, TestApp, TestCompany, eventually_within};

backend_tests!(
    a_policy_change_on_one_node_applies_to_a_create_on_another,
    a_calendar_change_applies_to_the_next_create,
    a_custom_field_condition_reads_the_values_the_ticket_is_created_with,
    the_sla_says_when_each_warning_was_sent,
    a_create_that_starts_clocks_answers_as_its_get_reads,
);

/// HIGH tickets: first response in 30 minutes, resolution in 240.
fn fast(business_hours_id: Option<&Value>) -> Value {
    json!([{"name": "Fast", "businessHoursId": business_hours_id,
            "targets": {"HIGH": {"firstResponseMinutes": 30, "resolutionMinutes": 240}}}])
}

fn tenant_of(acme: &TestCompany) -> Tenant {
    Tenant::new(acme.company.id, Mode::Test)
}

async fn a_policy_change_on_one_node_applies_to_a_create_on_another(backend: Backend) {
    let node_a = quiet(backend).await;
    let acme = node_a.company().await;
    if node_a.config.redis_url.is_none() {
        // One node without Redis: the bus is in-process.
        assert_eq!(ticket(&node_a, &acme, "HIGH").await["sla"], Value::Null);
        let policies = put_policies(&node_a, &acme.key, fast(None)).await;
        let made = ticket(&node_a, &acme, "HIGH").await;
        assert_eq!(made["sla"]["policyId"], policies[0]["id"]);
        return;
    }
    let node_b = node_a.spawn_peer().await;
    // Node B holds acme's rules (no policy) from its first create.
    assert_eq!(ticket(&node_b, &acme, "HIGH").await["sla"], Value::Null);
    assert!(node_b.state.sla.get(&tenant_of(&acme)).is_some());

    let policies = put_policies(&node_a, &acme.key, fast(None)).await;
    // Node B learns it over the bus, long before its snapshot expires
    // (`SNAPSHOT_TTL`): waiting on expiry alone would not get here.
    eventually_within(
        "node B drops acme's old SLA rules",
        SNAPSHOT_TTL / 2,
        || async { node_b.state.sla.get(&tenant_of(&acme)).is_none() },
    )
    .await;
    let made = ticket(&node_b, &acme, "HIGH").await;
    assert_eq!(made["sla"]["policyId"], policies[0]["id"]);
    assert_eq!(
        made["sla"]["firstResponseDueAt"],
        plus(&made["createdAt"], 30)
    );
}

async fn a_calendar_change_applies_to_the_next_create(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let every_day: Vec<Value> = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
        .iter()
        .map(|day| json!({"day": day, "open": "00:00", "close": "24:00"}))
        .collect();
    let always = json!({"name": "Always", "timezone": "UTC", "weekly": every_day});
    let calendar = create_calendar(&app, &acme, always).await;
    put_policies(&app, &acme.key, fast(Some(&calendar["id"]))).await;
    let before = ticket(&app, &acme, "HIGH").await;
    assert_eq!(
        before["sla"]["firstResponseDueAt"],
        plus(&before["createdAt"], 30)
    );

    // Open one hour a week, on the weekday after tomorrow.
    let open_day = (app.state.clock.now().0 + Duration::days(2)).weekday();
    let weekly = json!([{"day": open_day.to_string().to_lowercase(), "open": "09:00",
                         "close": "10:00"}]);
    let path = format!("/settings/business-hours/{}", id_of(&calendar));
    app.patch(&path, &acme.key, json!({"weekly": weekly}))
        .await
        .assert_status(200);
    let after = ticket(&app, &acme, "HIGH").await;
    let created = instant(&after["createdAt"]).date_naive();
    let due_day = (1..=7)
        .map(|d| created + Duration::days(d))
        .find(|d| d.weekday() == open_day)
        .expect("a day of the week");
    assert_eq!(
        after["sla"]["firstResponseDueAt"],
        json!(format!("{due_day}T09:30:00.000Z"))
    );
}

async fn a_custom_field_condition_reads_the_values_the_ticket_is_created_with(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    app.post(
        "/settings/custom-fields",
        &acme.key,
        json!({"key": "plan", "label": "Plan", "type": "select", "appliesTo": ["ticket"],
               "options": ["basic", "pro"]}),
    )
    .await
    .assert_status(201);
    let policies = put_policies(
        &app,
        &acme.key,
        json!([
            {"name": "Pro", "conditions": {"customFields": {"plan": "pro"}},
             "targets": {"HIGH": {"firstResponseMinutes": 10}}},
            {"name": "Everyone", "targets": {"HIGH": {"firstResponseMinutes": 60}}},
        ]),
    )
    .await;
    let create = |plan: &str| {
        json!({"subject": "Printer on fire", "entityId": acme.entity.id, "priority": "HIGH",
               "customFields": {"plan": plan}})
    };
    let pro = app.post("/tickets", &acme.key, create("pro")).await;
    let basic = app.post("/tickets", &acme.key, create("basic")).await;
    assert_eq!(pro.assert_status(201)["sla"]["policyId"], policies[0]["id"]);
    assert_eq!(
        basic.assert_status(201)["sla"]["policyId"],
        policies[1]["id"]
    );
}

async fn the_sla_says_when_each_warning_was_sent(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    put_policies(&app, &acme.key, fast(None)).await;
    let receiver = Receiver::always(200).await;
    create_webhook(&app, &acme.key, &receiver.url("/hook"), &["sla.warning"]).await;
    let mut socket = Client::key(&app, &acme.key).await;
    socket
        .subscribe(&format!("tickets:{}", acme.entity.id))
        .await;
    let t = ticket(&app, &acme, "HIGH").await;
    assert_eq!(t["sla"]["warned"], json!({}));
    assert_eq!(socket.next().await["type"], "ticket.created");

    // 20 minutes in: the first response (due at 30) warns 15 ahead.
    app.state.clock.advance(Duration::minutes(20));
    pass(&app).await;
    let warned = json!({"firstResponse": plus(&t["createdAt"], 15)});
    let frame = socket.next().await;
    assert_eq!(frame["type"], "sla.warning", "{frame}");
    assert_eq!(frame["data"]["data"]["sla"]["warned"], warned);
    let id = t["id"].as_str().expect("id");
    let r = app.get(&format!("/tickets/{id}"), &acme.key).await;
    assert_eq!(r.assert_status(200)["sla"]["warned"], warned);
    drive_until(&app, "the warning's delivery", || receiver.count() >= 1).await;
    settle(&app).await;
    let body: Value = serde_json::from_slice(&receiver.hits()[0].body).expect("JSON");
    assert_eq!(body["data"]["sla"]["warned"], warned, "{body}");
}

/// A create whose policy starts its clocks on business hours answers with
/// the `sla` its GET then reads from the stored clocks (on Postgres the
/// clocks are written in the ticket's own statement and the answer is
/// built from them, not read back).
async fn a_create_that_starts_clocks_answers_as_its_get_reads(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let calendar = create_calendar(&app, &acme, super::office()).await;
    put_policies(&app, &acme.key, fast(Some(&calendar["id"]))).await;
    let made = ticket(&app, &acme, "HIGH").await;
    assert!(made["sla"]["resolutionDueAt"].is_string(), "{made}");
    let id = id_of(&made);
    let read = app.get(&format!("/tickets/{id}"), &acme.key).await;
    assert_eq!(read.assert_status(200), &made);
}
