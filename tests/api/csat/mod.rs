//! Satisfaction ratings: a visitor rates a closed chat (visitor token) or a
//! resolved ticket (signed email link), once, changeable for 7 days; the
//! entity's `csat` setting (`auto`, `manual`, `off`); `GET /ratings`, the
//! events and the report figures.

mod links;
mod listing;
mod ratings;
mod visitors;

use serde_json::{Value, json};
use uuid::Uuid;

use crate::support::{TestApp, TestCompany, TestResponse};
use crate::widget::start_chat;

/// A widget chat of the company's entity, closed by an agent: its id and
/// its visitor token.
pub async fn closed_chat(app: &TestApp, acme: &TestCompany) -> (String, String) {
    let (id, token) = open_chat(app, acme).await;
    close_chat(app, acme, &id).await;
    (id, token)
}

/// A widget chat, still active: its id and its visitor token.
pub async fn open_chat(app: &TestApp, acme: &TestCompany) -> (String, String) {
    let chat = start_chat(
        app,
        &acme.entity.widget_key_test,
        json!({"visitorName": "Zoe"}),
    )
    .await;
    (
        chat["id"].as_str().expect("id").to_string(),
        chat["visitorToken"].as_str().expect("token").to_string(),
    )
}

pub async fn close_chat(app: &TestApp, acme: &TestCompany, id: &str) {
    app.patch(
        &format!("/chat/sessions/{id}"),
        &acme.key,
        json!({"status": "CLOSED"}),
    )
    .await
    .assert_status(200);
}

/// A ticket for zoe@example.com, resolved: its id.
pub async fn resolved_ticket(app: &TestApp, acme: &TestCompany) -> String {
    let r = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": "Lost parcel", "entityId": acme.entity.id,
                   "visitorEmail": "zoe@example.com"}),
        )
        .await;
    let id = r.assert_status(201)["id"].as_str().expect("id").to_string();
    app.patch(
        &format!("/tickets/{id}"),
        &acme.key,
        json!({"status": "RESOLVED"}),
    )
    .await
    .assert_status(200);
    id
}

pub async fn set_csat(app: &TestApp, acme: &TestCompany, mode: &str) {
    let r = app
        .patch(
            &format!("/entities/{}", acme.entity.id),
            &acme.key,
            json!({"csat": mode}),
        )
        .await;
    assert_eq!(r.assert_status(200)["csat"], mode);
}

/// `POST /widget/v1/ratings` with the visitor token (if any) and `body`.
pub async fn rate(app: &TestApp, visitor_token: Option<&str>, body: Value) -> TestResponse {
    let mut request = app.client.post(app.url("/widget/v1/ratings")).json(&body);
    if let Some(token) = visitor_token {
        request = request.header("Authorization", format!("Bearer {token}"));
    }
    TestResponse::from(request.send().await).await
}

/// Texts of the company's queued emails, oldest first.
pub async fn email_texts(app: &TestApp, company_id: Uuid) -> Vec<String> {
    let rows = supportdesk::on_db!(&app.state.db, c => sqlx::query_as::<_, (sqlx::types::Json<Value>,)>(
        "SELECT payload FROM outbox_jobs WHERE kind = 'email' AND company_id = $1 \
         ORDER BY created_at, id")
        .bind(company_id)
        .fetch_all(c)
        .await
        .expect("outbox read"));
    rows.into_iter()
        .map(|(payload,)| payload.0["text"].as_str().expect("text").to_string())
        .collect()
}

/// The token of the rating link in `text`, if it has one.
pub fn link_token(text: &str) -> Option<String> {
    let (_, rest) = text.split_once("/widget/v1/rate?token=")?;
    Some(rest.split_whitespace().next()?.to_string())
}
