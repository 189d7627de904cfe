//! Company settings, escalation rules (the list and the scheduler) and
//! ticket reports, and the bounds of every query parameter. Shared helpers
//! here; the tests in the submodules.

mod field_conditions;
mod query_bounds;
mod report_fields;
mod report_tags;
mod reports;
mod scheduler;
mod settings;
mod tag_conditions;

use serde_json::{Value, json};
use supportdesk::auth::{Mode, Tenant};
use supportdesk::time::Timestamp;
use supportdesk::users::store::{NewUser, User};
use uuid::Uuid;

use crate::support::{TestApp, TestCompany};

fn tenant(company_id: Uuid, mode: Mode) -> Tenant {
    Tenant::new(company_id, mode)
}

async fn user(app: &TestApp, company_id: Uuid, name: &str) -> User {
    supportdesk::users::store::create(
        &app.state.db,
        &tenant(company_id, Mode::Test),
        NewUser {
            id: None,
            name: name.into(),
            email: format!("{}-{}@example.com", name.to_lowercase(), Uuid::new_v4()),
            role: supportdesk::users::Role::Agent.into(),
        },
        app.state.clock.now(),
    )
    .await
    .expect("user created")
}

/// A ticket of `acme`'s main entity, through the API.
async fn ticket(app: &TestApp, acme: &TestCompany, body: Value) -> String {
    let mut body = body;
    body["entityId"] = json!(acme.entity.id);
    let r = app.post("/tickets", &acme.key, body).await;
    r.assert_status(201)["id"].as_str().expect("id").to_string()
}

async fn get_ticket(app: &TestApp, key: &str, id: &str) -> Value {
    app.get(&format!("/tickets/{id}"), key)
        .await
        .assert_status(200)
        .clone()
}

/// Moves a ticket's creation and last activity `minutes` into the past.
async fn backdate(app: &TestApp, id: &str, minutes: i64) {
    let at = Timestamp::from_datetime(chrono::Utc::now() - chrono::TimeDelta::minutes(minutes));
    let id = Uuid::parse_str(id).expect("uuid");
    let n = supportdesk::on_db!(&app.state.db, c => sqlx::query(
        "UPDATE tickets SET created_at = $1, updated_at = $1 WHERE id = $2")
        .bind(at).bind(id).execute(c).await.expect("backdated").rows_affected());
    assert_eq!(n, 1);
}

/// Replaces the key's escalation rules; returns the saved list.
async fn put_rules(app: &TestApp, key: &str, rules: Value) -> Vec<Value> {
    let r = app
        .put("/settings/escalation-rules", key, json!({ "rules": rules }))
        .await;
    r.assert_status(200)["rules"]
        .as_array()
        .expect("rules")
        .clone()
}

/// `ticket.escalated` events of a ticket, oldest first (the `events` rows
/// webhooks are delivered from).
async fn escalated_events(app: &TestApp, ticket_id: &str) -> Vec<Value> {
    let rows = supportdesk::on_db!(&app.state.db, c => sqlx::query_as::<_, (sqlx::types::Json<Value>,)>(
        "SELECT data FROM events WHERE name = 'ticket.escalated' ORDER BY created_at, id")
        .fetch_all(c)
        .await
        .expect("events read"));
    rows.into_iter()
        .map(|(data,)| data.0)
        .filter(|data| data["id"] == ticket_id)
        .collect()
}

/// Every `ticket.escalated` event in the database.
async fn escalated_event_count(app: &TestApp) -> i64 {
    supportdesk::on_db!(&app.state.db, c => sqlx::query_scalar::<_, i64>(
        "SELECT COUNT(*) FROM events WHERE name = 'ticket.escalated'")
        .fetch_one(c).await.expect("count"))
}

async fn firing_count(app: &TestApp) -> i64 {
    supportdesk::on_db!(&app.state.db, c => sqlx::query_scalar::<_, i64>(
        "SELECT COUNT(*) FROM escalation_rule_firings")
        .fetch_one(c).await.expect("count"))
}

/// The ticket's timeline entries of type `escalated`.
async fn escalated_activities(app: &TestApp, key: &str, id: &str) -> Vec<Value> {
    let r = app.get(&format!("/tickets/{id}/activities"), key).await;
    r.assert_status(200)["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter(|a| a["type"] == "escalated")
        .cloned()
        .collect()
}

async fn run_pass(app: &TestApp) -> usize {
    let signer = app.state.link_signer();
    supportdesk::tickets::rules::run_pass(&app.state.db, app.state.clock.now(), &signer)
        .await
        .expect("pass runs")
}

/// Asserts a 400 whose details name exactly `fields`.
#[track_caller]
fn assert_invalid(r: &crate::support::TestResponse, fields: &[&str]) {
    r.assert_error(400, "validation_failed");
    let mut got: Vec<&str> = r.body["details"]
        .as_array()
        .expect("details")
        .iter()
        .map(|d| d["field"].as_str().expect("field"))
        .collect();
    got.dedup();
    assert_eq!(got, fields, "{}", r.text);
}
