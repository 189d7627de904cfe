//! Attachments: uploads in both forms (streamed, limited, sniffed,
//! deduplicated), attaching them to tickets and comments, downloads with a
//! key and through signed links, and the sweeper. Shared helpers here.

mod bounds;
mod chat_retention;
mod downloads;
mod lifecycle;
mod messages;
mod quota;
mod records;
pub(crate) mod s3;
mod uploads;

use reqwest::Method;
use serde_json::{Value, json};

use crate::backend_tests;
use crate::support::{
    Backend, TestApp, TestCompany, TestResponse, assert_invalid, post_refused_body,
};

/// The first bytes of a PNG file: enough for the type to be sniffed.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0";

/// Uploads `bytes` as the raw body named `name`, claiming `claimed`.
async fn upload_raw(
    app: &TestApp,
    key: &str,
    name: &str,
    claimed: &str,
    bytes: Vec<u8>,
) -> TestResponse {
    TestResponse::from(
        app.api(Method::POST, "/attachments", Some(key))
            .header("Content-Type", claimed)
            .header(
                "Content-Disposition",
                format!("attachment; filename=\"{name}\""),
            )
            .body(bytes)
            .send()
            .await,
    )
    .await
}

/// Uploads `bytes` as a text file and answers the attachment.
async fn uploaded(app: &TestApp, acme: &TestCompany, bytes: &[u8]) -> Value {
    upload_raw(app, &acme.key, "notes.txt", "text/plain", bytes.to_vec())
        .await
        .assert_status(201)
        .clone()
}

fn id_of(value: &Value) -> String {
    value["id"].as_str().expect("id").to_string()
}

/// Every file under the app's attachment directory (stored bytes and
/// uploads in flight).
fn stored_files(app: &TestApp) -> Vec<std::path::PathBuf> {
    fn walk(dir: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, found);
            } else {
                found.push(path);
            }
        }
    }
    let mut found = Vec::new();
    walk(&app.config.data_dir.join("attachments"), &mut found);
    found
}

async fn attachment_rows(app: &TestApp) -> i64 {
    supportdesk::on_db!(&app.state.db, c => sqlx::query_scalar::<_, i64>(
        "SELECT COUNT(*) FROM attachments")
        .fetch_one(c)
        .await
        .expect("count"))
}

async fn ticket_with(app: &TestApp, acme: &TestCompany, ids: Value) -> TestResponse {
    app.post(
        "/tickets",
        &acme.key,
        json!({"subject": "With files", "entityId": acme.entity.id, "attachmentIds": ids}),
    )
    .await
}
