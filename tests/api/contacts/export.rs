//! `POST /contacts/{id}/export`: one zip of everything stored about the
//! person, listed against what the database holds for them and holding
//! nothing of another customer, downloadable once through its signed link.

use std::collections::BTreeSet;
use std::io::Read;

use serde_json::Value;

use super::person::{EMAIL, OTHER_EMAIL, OTHER_NAME, OTHER_PHRASE, run_request, store};
use super::text;
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    an_export_holds_what_the_database_holds_for_the_person,
    an_export_holds_nothing_of_another_customer,
    an_export_holds_the_bytes_of_their_files,
    an_export_downloads_once,
);

/// The downloaded zip's entries by name.
async fn download(app: &TestApp, job: &Value) -> Vec<(String, Vec<u8>)> {
    let url = text(job, "downloadUrl");
    let response = app.client.get(url).send().await.expect("download");
    assert_eq!(response.status().as_u16(), 200);
    let bytes = response.bytes().await.expect("zip").to_vec();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a zip");
    let mut entries = Vec::new();
    for index in 0..zip.len() {
        let mut file = zip.by_index(index).expect("entry");
        let mut content = Vec::new();
        file.read_to_end(&mut content).expect("entry bytes");
        entries.push((file.name().expect("entry name").to_string(), content));
    }
    entries
}

fn document(entries: &[(String, Vec<u8>)]) -> Value {
    let (_, bytes) = entries
        .iter()
        .find(|(name, _)| name == "contact.json")
        .expect("contact.json");
    serde_json::from_slice(bytes).expect("JSON")
}

fn ids(list: &Value) -> BTreeSet<String> {
    list.as_array()
        .expect("array")
        .iter()
        .map(|item| text(item, "id").to_string())
        .collect()
}

/// The ids a query over the database answers, as text.
async fn ids_in_db(app: &TestApp, sql: &'static str, id: uuid::Uuid) -> BTreeSet<String> {
    let rows: Vec<(uuid::Uuid,)> = supportdesk::on_db!(&app.state.db, c => sqlx::query_as(sql)
        .bind(id)
        .fetch_all(c)
        .await
        .expect("ids"));
    rows.into_iter().map(|(id,)| id.to_string()).collect()
}

async fn an_export_holds_what_the_database_holds_for_the_person(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let kim = store(&app, &acme).await;
    let contact: uuid::Uuid = kim.contact.parse().expect("id");
    let job = run_request(&app, &acme, &kim.contact, "export").await;
    let doc = document(&download(&app, &job).await);
    let tickets: Vec<&Value> = doc["tickets"].as_array().expect("tickets").iter().collect();
    let chats: Vec<&Value> = doc["chats"].as_array().expect("chats").iter().collect();
    let exported = (
        doc["contact"]["id"].clone(),
        tickets
            .iter()
            .map(|t| text(&t["ticket"], "id").to_string())
            .collect::<BTreeSet<_>>(),
        tickets
            .iter()
            .flat_map(|t| ids(&t["comments"]))
            .collect::<BTreeSet<_>>(),
        chats
            .iter()
            .map(|c| text(&c["session"], "id").to_string())
            .collect::<BTreeSet<_>>(),
        chats
            .iter()
            .flat_map(|c| ids(&c["messages"]))
            .collect::<BTreeSet<_>>(),
        ids(&doc["files"]),
        doc["emails"]
            .as_array()
            .expect("emails")
            .iter()
            .map(|email| text(email, "to").to_string())
            .collect::<Vec<_>>(),
    );
    let tickets_sql = "SELECT id FROM tickets WHERE contact_id = $1";
    let sessions_sql = "SELECT id FROM chat_sessions WHERE contact_id = $1";
    let held = (
        serde_json::json!(kim.contact),
        ids_in_db(&app, tickets_sql, contact).await,
        ids_in_db(
            &app,
            "SELECT c.id FROM ticket_comments c JOIN tickets t ON t.id = c.ticket_id \
             WHERE t.contact_id = $1",
            contact,
        )
        .await,
        ids_in_db(&app, sessions_sql, contact).await,
        ids_in_db(
            &app,
            "SELECT m.id FROM chat_messages m JOIN chat_sessions s \
             ON s.id = m.session_id WHERE s.contact_id = $1",
            contact,
        )
        .await,
        ids_in_db(&app, FILES_SQL, contact).await,
        vec![EMAIL.to_string(); email_count(&app).await],
    );
    assert_eq!(exported, held);
}

/// The files on the contact's tickets, comments, messages and chats.
const FILES_SQL: &str = "SELECT a.id FROM attachments a WHERE \
     a.ticket_id IN (SELECT id FROM tickets WHERE contact_id = $1) \
     OR a.comment_id IN (SELECT c.id FROM ticket_comments c JOIN tickets t \
     ON t.id = c.ticket_id WHERE t.contact_id = $1) \
     OR a.message_id IN (SELECT m.id FROM chat_messages m JOIN chat_sessions s \
     ON s.id = m.session_id WHERE s.contact_id = $1) \
     OR a.session_id IN (SELECT id FROM chat_sessions WHERE contact_id = $1)";

/// How many emails the outbox holds to the person.
async fn email_count(app: &TestApp) -> usize {
    let payloads: Vec<(sqlx::types::Json<Value>,)> = supportdesk::on_db!(&app.state.db, c => sqlx::query_as(
        "SELECT payload FROM outbox_jobs WHERE kind = 'email'")
        .fetch_all(c)
        .await
        .expect("jobs"));
    payloads
        .iter()
        .filter(|(payload,)| payload.0["to"] == EMAIL)
        .count()
}

async fn an_export_holds_nothing_of_another_customer(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let kim = store(&app, &acme).await;
    let job = run_request(&app, &acme, &kim.contact, "export").await;
    let entries = download(&app, &job).await;
    let found: Vec<(&str, &str)> = entries
        .iter()
        .flat_map(|(name, bytes)| {
            [
                OTHER_NAME,
                OTHER_EMAIL,
                OTHER_PHRASE,
                kim.other_ticket.as_str(),
            ]
            .into_iter()
            .filter(|needle| super::scan::contains_ignoring_case(bytes, &needle.to_lowercase()))
            .map(move |needle| (name.as_str(), needle))
        })
        .collect();
    assert_eq!(found, Vec::<(&str, &str)>::new());
}

async fn an_export_holds_the_bytes_of_their_files(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let kim = store(&app, &acme).await;
    let job = run_request(&app, &acme, &kim.contact, "export").await;
    let entries = download(&app, &job).await;
    let name = format!("files/{}/receipt.txt", kim.file);
    let file = entries.iter().find(|(entry, _)| *entry == name);
    assert_eq!(
        file.map(|(_, bytes)| String::from_utf8_lossy(bytes).to_string()),
        Some(format!(
            "receipt of the {}, {}",
            super::person::PHRASE,
            super::person::PHONE
        ))
    );
}

async fn an_export_downloads_once(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let kim = store(&app, &acme).await;
    let job = run_request(&app, &acme, &kim.contact, "export").await;
    download(&app, &job).await;
    let again = app
        .client
        .get(text(&job, "downloadUrl"))
        .send()
        .await
        .expect("second download");
    let after = app
        .get(&format!("/jobs/{}", text(&job, "id")), &acme.key)
        .await
        .assert_status(200)
        .clone();
    assert_eq!(
        (again.status().as_u16(), after["downloadUrl"].clone()),
        (404, Value::Null)
    );
}
