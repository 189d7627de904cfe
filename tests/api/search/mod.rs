//! `GET /tickets?q=` and `GET /chat/sessions?q=`: ranking and filters on a
//! fixed corpus (the same order on both backends), internal notes only for
//! keys that write tickets, query text that is never a 500, and documents
//! searchable as soon as a write returns. Shared helpers here.

mod chat;
mod input;
mod paging;
mod ranked;
mod tickets;

use serde_json::{Value, json};
use supportdesk::auth::{Mode, Scope, ScopeSet, Tenant};

use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

/// `text` as a query-string value: every byte but letters and digits
/// percent-encoded.
fn encoded(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn id_of(value: &Value) -> String {
    value["id"].as_str().expect("id").to_string()
}

/// The ids of a list answer, in order, and its total.
fn ids_and_total(body: &Value) -> (Vec<String>, i64) {
    let ids = body["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(id_of)
        .collect();
    (ids, body["total"].as_i64().expect("total"))
}

/// The ids (in order) and total of `GET {list}?q={q}{extra}`.
async fn searched(
    app: &TestApp,
    key: &str,
    list: &str,
    q: &str,
    extra: &str,
) -> (Vec<String>, i64) {
    let r = app
        .get(&format!("{list}?q={}{extra}", encoded(q)), key)
        .await;
    ids_and_total(r.assert_status(200))
}

async fn ticket(app: &TestApp, acme: &TestCompany, body: Value) -> String {
    let mut body = body;
    body["entityId"] = json!(acme.entity.id);
    id_of(
        app.post("/tickets", &acme.key, body)
            .await
            .assert_status(201),
    )
}

async fn comment(app: &TestApp, acme: &TestCompany, ticket: &str, body: &str, internal: bool) {
    app.post(
        &format!("/tickets/{ticket}/comments"),
        &acme.key,
        json!({"body": body, "isInternal": internal}),
    )
    .await
    .assert_status(201);
}

/// A key of `acme`'s test mode with only `tickets:read`.
async fn read_only_key(app: &TestApp, acme: &TestCompany) -> String {
    app.key(
        acme.company.id,
        Mode::Test,
        ScopeSet::from_scopes([Scope::TicketsRead]),
    )
    .await
}
