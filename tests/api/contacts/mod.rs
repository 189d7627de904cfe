//! Contacts and organisations (issue 53): contacts by hand (`crud`), found
//! or created from the tickets and chats people open (`matching`), merged
//! (`merge`), and organisations collecting contacts by their domains
//! (`organizations`); a person's data on request: the jobs
//! (`requests`), the export (`export`) and the erasure (`erasure`), of a
//! person stored everywhere (`person`), looked for everywhere (`scan`);
//! the company's data retention and its dry run (`retention`).
//! Shared helpers here.

mod crud;
mod erasure;
mod export;
mod matching;
mod merge;
mod organizations;
pub mod person;
mod requests;
mod retention;
mod scan;

use serde_json::{Value, json};

use crate::support::{TestApp, TestCompany};

/// Creates a contact of the company from `body`; answers it.
async fn contact(app: &TestApp, acme: &TestCompany, body: Value) -> Value {
    app.post("/contacts", &acme.key, body)
        .await
        .assert_status(201)
        .clone()
}

/// Creates a ticket with `visitorEmail` (none: null); answers it.
async fn ticket_from(app: &TestApp, acme: &TestCompany, email: Option<&str>) -> Value {
    app.post(
        "/tickets",
        &acme.key,
        json!({"subject": "Printer on fire", "entityId": acme.entity.id, "visitorEmail": email}),
    )
    .await
    .assert_status(201)
    .clone()
}

/// Opens a chat as the key (its email counts as proven); answers it.
async fn chat_from(app: &TestApp, acme: &TestCompany, email: &str) -> Value {
    app.post(
        "/chat/sessions",
        &acme.key,
        json!({"entityId": acme.entity.id, "visitorName": "Kim", "visitorEmail": email}),
    )
    .await
    .assert_status(201)
    .clone()
}

/// The string `name` of `record`.
fn text<'a>(record: &'a Value, name: &str) -> &'a str {
    record[name]
        .as_str()
        .unwrap_or_else(|| panic!("{name} in {record}"))
}

/// The ids of the records in `list` (an array of objects).
fn ids(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap_or_else(|| panic!("an array: {list}"))
        .iter()
        .map(|record| text(record, "id").to_string())
        .collect()
}

/// A contact as `GET /contacts/{id}` answers it.
async fn read(app: &TestApp, acme: &TestCompany, id: &str) -> Value {
    app.get(&format!("/contacts/{id}"), &acme.key)
        .await
        .assert_status(200)
        .clone()
}
