//! Tickets: create, list, update, escalate, delete, comments, the timeline,
//! ticket numbers under concurrency, events, visitor emails, tenancy and
//! validation. Shared helpers here; the tests in the submodules.

mod commits;
mod crud;
mod errors;
mod list;
mod live;
mod notes;
mod notify;
mod numbers;
mod scopes_cut;
mod unassigned;

use serde_json::{Value, json};
use supportdesk::auth::{Mode, Scope, ScopeSet, Tenant};
use supportdesk::db::Db;
use supportdesk::tickets::model::TicketFilter;
use supportdesk::tickets::{Escalation, store};
use supportdesk::users::store::{NewUser, User};
use uuid::Uuid;

use crate::backend_tests;
use crate::postgres_tests;
use crate::support::{Backend, TestApp, TestCompany, TestResponse};

fn test_tenant(company_id: Uuid) -> Tenant {
    Tenant::new(company_id, Mode::Test)
}

pub(crate) async fn user(app: &TestApp, company_id: Uuid, name: &str) -> User {
    supportdesk::users::store::create(
        &app.state.db,
        &test_tenant(company_id),
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

async fn ticket(app: &TestApp, acme: &TestCompany, body: Value) -> Value {
    let mut body = body;
    body["entityId"] = json!(acme.entity.id);
    app.post("/tickets", &acme.key, body)
        .await
        .assert_status(201)
        .clone()
}

fn id_of(value: &Value) -> String {
    value["id"].as_str().expect("id").to_string()
}

/// The company's ticket and comment webhook events (not `user.created`, nor
/// the change feed's entries that have no webhook event), oldest first.
async fn events(app: &TestApp, company_id: Uuid) -> Vec<(String, Value)> {
    let rows = supportdesk::on_db!(&app.state.db, c => sqlx::query_as::<_, (String, sqlx::types::Json<Value>)>(
        "SELECT name, data FROM events WHERE company_id = $1 AND name <> 'user.created' \
         ORDER BY created_at, id")
        .bind(company_id)
        .fetch_all(c)
        .await
        .expect("events read"));
    rows.into_iter()
        .filter(|(name, _)| supportdesk::events::EVENT_NAMES.contains(&name.as_str()))
        .map(|(name, data)| (name, data.0))
        .collect()
}

fn names(events: &[(String, Value)]) -> Vec<&str> {
    events.iter().map(|(name, _)| name.as_str()).collect()
}

/// Payloads of the company's queued emails, oldest first.
async fn emails(app: &TestApp, company_id: Uuid) -> Vec<Value> {
    let rows = supportdesk::on_db!(&app.state.db, c => sqlx::query_as::<_, (sqlx::types::Json<Value>,)>(
        "SELECT payload FROM outbox_jobs WHERE kind = 'email' AND company_id = $1 \
         ORDER BY created_at, id")
        .bind(company_id)
        .fetch_all(c)
        .await
        .expect("outbox read"));
    rows.into_iter().map(|(payload,)| payload.0).collect()
}

async fn activity_types(app: &TestApp, key: &str, id: &str) -> Vec<String> {
    let r = app.get(&format!("/tickets/{id}/activities"), key).await;
    r.assert_status(200)["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|a| a["type"].as_str().expect("type").to_string())
        .collect()
}

fn is_timestamp(value: &Value) -> bool {
    let text = value.as_str().unwrap_or_default();
    text.len() == 24 && text.ends_with('Z') && text.as_bytes()[19] == b'.'
}
