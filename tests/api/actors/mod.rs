//! Attribution: every change names who made it (`actor {type, id, name}`)
//! in its webhook body, change-feed entry, timeline entry and socket frame.
//! A key's changes name the key, a visitor's the visitor (their chat
//! session and name), the passes' and the routing's the system.

mod events;
mod timeline;

use serde_json::{Value, json};
use uuid::Uuid;

use crate::support::{TestApp, TestCompany};

/// The actor a change by `acme`'s key shows.
pub async fn key_actor(app: &TestApp, acme: &TestCompany) -> Value {
    let id: Uuid = supportdesk::on_db!(&app.state.db, c => sqlx::query_scalar(
        "SELECT id FROM api_keys WHERE company_id = $1")
        .bind(acme.company.id)
        .fetch_one(c)
        .await
        .expect("the company's one key"));
    json!({"type": "key", "id": id, "name": "test key"})
}

/// The actor of the service's own changes.
pub fn system_actor() -> Value {
    json!({"type": "system", "id": null, "name": "system"})
}

/// A HIGH ticket of `acme` (30 minutes to a first response, 240 to
/// resolution, under the policy of [`fast_policy`]).
pub async fn high_ticket(app: &TestApp, acme: &TestCompany) -> String {
    let r = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": "Printer on fire", "entityId": acme.entity.id,
                   "priority": "HIGH"}),
        )
        .await;
    r.assert_status(201)["id"].as_str().expect("id").to_string()
}

/// HIGH tickets: 30 minutes to a first response, 240 to resolution (kept
/// when an escalation makes them URGENT).
pub async fn fast_policy(app: &TestApp, acme: &TestCompany) {
    app.put(
        "/settings/sla-policies",
        &acme.key,
        json!({"policies": [{"name": "Fast", "conditions": {"priorities": ["HIGH", "URGENT"]},
            "targets": {"HIGH": {"firstResponseMinutes": 30, "resolutionMinutes": 240}}}]}),
    )
    .await
    .assert_status(200);
}

/// The SLA pass, as its worker runs it.
pub async fn sla_pass(app: &TestApp) {
    let signer = app.state.link_signer();
    supportdesk::sequences::sla_pass::run_pass(&app.state.db, app.state.clock.now(), &signer)
        .await
        .expect("sla pass");
}
