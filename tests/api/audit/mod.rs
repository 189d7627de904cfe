//! The audit log (issue 51): each security and admin change writes one
//! entry with its actor and target (`recorded`, `recorded_org`,
//! `recorded_config`, `recorded_security`, `signing_in`), never a secret
//! (`secrets`), and none when it rolls back (`rollback`); the chain the
//! sealer builds verifies and names the first entry tampered with, and
//! retention keeps the rest verifiable (`chain`; the company's retention
//! and its pass, `retention`; `audit prune` within it, `pruning`); the
//! list and its exports show the company's own entries only (`listing`),
//! and a caller limited to teams their teams' only (`teams_only`); email
//! channels and a person's export are recorded (`recorded_data`); two
//! nodes make one chain (`nodes`). Shared helpers here.

mod accounts;
mod chain;
mod forwarding;
mod listing;
mod nodes;
mod pruning;
mod recorded;
mod recorded_config;
mod recorded_data;
mod recorded_org;
mod recorded_security;
mod retention;
mod rollback;
mod secrets;
mod signing_in;
mod teams_only;

use serde_json::Value;
use uuid::Uuid;

use crate::support::{TestApp, TestCompany};

/// The company's entries with `action` (the list's filter), newest first.
async fn entries_of(app: &TestApp, acme: &TestCompany, action: &str) -> Vec<Value> {
    app.get(&format!("/audit-log?action={action}&limit=200"), &acme.key)
        .await
        .assert_status(200)["data"]
        .as_array()
        .expect("data")
        .clone()
}

/// The one entry with `action`; fails unless there is exactly one.
async fn only_entry(app: &TestApp, acme: &TestCompany, action: &str) -> Value {
    let entries = entries_of(app, acme, action).await;
    assert_eq!(entries.len(), 1, "one {action} entry in {entries:?}");
    entries[0].clone()
}

/// The id of the key `acme.key` is (the actor of its changes).
async fn key_id(app: &TestApp, acme: &TestCompany) -> String {
    let keys = app.get("/api-keys", &acme.key).await.assert_status(200)["data"].clone();
    keys.as_array()
        .expect("keys")
        .iter()
        .find(|k| k["name"] == "test key")
        .expect("the test key")["id"]
        .as_str()
        .expect("id")
        .to_owned()
}

/// Asserts `entry` was made by the key `key_id` on `target_type` `target_id`.
#[track_caller]
fn assert_by_key_on(entry: &Value, key_id: &str, target_type: &str, target_id: &str) {
    assert_eq!(entry["actor"]["type"], "key", "{entry}");
    assert_eq!(entry["actor"]["id"], key_id, "{entry}");
    assert_eq!(entry["actor"]["name"], "test key", "{entry}");
    assert_eq!(entry["target"]["type"], target_type, "{entry}");
    assert_eq!(entry["target"]["id"], target_id, "{entry}");
}

/// Seals every committed entry of the company (the worker's pass, run now).
async fn seal(app: &TestApp, company_id: Uuid) {
    supportdesk::audit::sealer::seal_company(&app.state.db, &app.state.clock, company_id)
        .await
        .expect("sealed");
}

/// The verdict of `supportdesk audit verify --company`.
async fn verdict(app: &TestApp, company_id: Uuid) -> supportdesk::audit::verify::Verdict {
    supportdesk::audit::verify::verify(&app.state.db, company_id)
        .await
        .expect("verified")
}

/// Every entry of the company as its JSON text, for searching.
async fn all_entries_text(app: &TestApp, acme: &TestCompany) -> String {
    app.api(reqwest::Method::GET, "/audit-log", Some(&acme.key))
        .header("Accept", "application/x-ndjson")
        .send()
        .await
        .expect("sent")
        .text()
        .await
        .expect("body")
}
