//! SLA settings: business-hours calendars (`/settings/business-hours`) and
//! the policy list (`/settings/sla-policies`). Shared helpers here; the
//! tests in the submodules.

mod calendars;
mod created;
mod escalated;
mod live;
mod policies;
mod reports;
mod tickets;

use serde_json::{Value, json};

use crate::support::{TestApp, TestCompany};

/// The Berlin office: weekdays 09:00–17:30 with a lunch break on Fridays.
fn office() -> Value {
    json!({
        "name": "Berlin office",
        "timezone": "Europe/Berlin",
        "weekly": [
            {"day": "mon", "open": "09:00", "close": "17:30"},
            {"day": "tue", "open": "09:00", "close": "17:30"},
            {"day": "wed", "open": "09:00", "close": "17:30"},
            {"day": "thu", "open": "09:00", "close": "17:30"},
            {"day": "fri", "open": "13:00", "close": "17:00"},
            {"day": "fri", "open": "09:00", "close": "12:00"},
        ],
        "holidays": ["2026-12-26", "2026-12-25", "2026-12-25"],
    })
}

/// Creates a calendar; answers it.
async fn create_calendar(app: &TestApp, acme: &TestCompany, body: Value) -> Value {
    app.post("/settings/business-hours", &acme.key, body)
        .await
        .assert_status(201)
        .clone()
}

/// Replaces the policy list; answers the stored list.
async fn put_policies(app: &TestApp, key: &str, policies: Value) -> Vec<Value> {
    let r = app
        .put("/settings/sla-policies", key, json!({"policies": policies}))
        .await;
    r.assert_status(200)["policies"]
        .as_array()
        .expect("policies")
        .clone()
}
