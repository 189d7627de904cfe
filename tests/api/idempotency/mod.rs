//! `Idempotency-Key` on POST: repeats get the stored answer and change
//! nothing; concurrent repeats, other requests under a used key, refusals
//! that are not recorded, expiry, and the document.

mod replay;
mod rules;
mod senders;

use reqwest::Method;
use serde_json::Value;
use uuid::Uuid;

use crate::support::{TestApp, TestResponse};

/// `POST /api/v1{path}` with an API key and an idempotency key.
pub async fn post_keyed(
    app: &TestApp,
    path: &str,
    key: &str,
    idempotency_key: &str,
    body: &Value,
) -> TestResponse {
    TestResponse::from(
        app.api(Method::POST, path, Some(key))
            .header("Idempotency-Key", idempotency_key)
            .json(body)
            .send()
            .await,
    )
    .await
}

/// Asserts `repeat` is `first` replayed: the same status, content type and
/// bytes, marked `Idempotent-Replayed: true` (and `first` not marked).
#[track_caller]
pub fn assert_replayed(first: &TestResponse, repeat: &TestResponse) {
    assert_eq!(first.header("idempotent-replayed"), None, "{}", first.text);
    assert_eq!(
        repeat.header("idempotent-replayed"),
        Some("true"),
        "{}",
        repeat.text
    );
    assert_eq!(repeat.status, first.status);
    assert_eq!(repeat.header("content-type"), first.header("content-type"));
    assert_eq!(repeat.text, first.text);
}

/// `SELECT COUNT(*) FROM {table} WHERE company_id = $1` (and `extra`).
pub async fn count(app: &TestApp, table: &str, company_id: Uuid, extra: &str) -> i64 {
    let sql = format!("SELECT COUNT(*) FROM {table} WHERE company_id = $1 {extra}");
    supportdesk::on_db!(&app.state.db, c => sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql))
        .bind(company_id)
        .fetch_one(c)
        .await
        .expect("count"))
}

pub fn id_of(value: &Value) -> String {
    value["id"].as_str().expect("id").to_string()
}
