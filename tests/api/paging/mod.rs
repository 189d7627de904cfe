//! Cursor paging on every list, tamper-evident cursors, and ticket totals
//! that stay exact (counters) or say they are a lower bound (capped counts).

mod cursors;
mod lists;
mod openapi;
mod query_params;
mod totals;
mod walk;

use serde_json::{Value, json};

use crate::support::{TestApp, TestCompany};

/// The ids of a page's records, in order.
fn ids(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|record| record["id"].as_str().expect("id").to_string())
        .collect()
}

/// `path` with `after=<cursor>` appended (`path` may have a query).
fn after(path: &str, cursor: &str) -> String {
    let joiner = if path.contains('?') { '&' } else { '?' };
    format!("{path}{joiner}after={cursor}")
}

async fn ticket(app: &TestApp, acme: &TestCompany, subject: &str) -> String {
    let r = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": subject, "entityId": acme.entity.id}),
        )
        .await;
    r.assert_status(201)["id"].as_str().expect("id").to_string()
}
