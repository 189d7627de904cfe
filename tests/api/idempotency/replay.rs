//! A repeat with the same key, method, path and body gets the first answer
//! byte for byte and runs nothing: no second row, event, email or delivery.

use serde_json::{Value, json};
use supportdesk::auth::{Mode, Scope, ScopeSet, Tenant};
use uuid::Uuid;

use super::{assert_replayed, count, id_of, post_keyed};
use crate::backend_tests;
use crate::outbound::support::{Receiver, create_webhook, drive_until, settle};
use crate::support::{Backend, TestApp, TestCompany, TestResponse};

backend_tests!(
    a_repeated_ticket_creation_is_replayed_and_sends_nothing_twice,
    comments_and_escalations_are_replayed,
    chat_sessions_and_messages_are_replayed,
    kb_articles_are_replayed,
    a_replayed_webhook_shows_the_first_secret,
    a_replayed_api_key_is_the_same_working_key,
    widget_sessions_are_replayed,
    widget_uploads_and_ratings_are_replayed,
    browsers_may_send_the_key_to_the_widget,
);

/// Posts `body` twice under one key; asserts the replay; the first answer.
async fn twice(app: &TestApp, acme: &TestCompany, path: &str, body: Value) -> TestResponse {
    let idempotency_key = Uuid::new_v4().to_string();
    let first = post_keyed(app, path, &acme.key, &idempotency_key, &body).await;
    let repeat = post_keyed(app, path, &acme.key, &idempotency_key, &body).await;
    assert_replayed(&first, &repeat);
    first
}

async fn events(app: &TestApp, acme: &TestCompany, name: &str) -> i64 {
    count(
        app,
        "events",
        acme.company.id,
        &format!("AND name = '{name}'"),
    )
    .await
}

async fn agent(app: &TestApp, acme: &TestCompany) -> Uuid {
    let tenant = Tenant::new(acme.company.id, Mode::Test);
    crate::outbound::support::create_user(app, &tenant, "Ann").await
}

async fn a_repeated_ticket_creation_is_replayed_and_sends_nothing_twice(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let receiver = Receiver::always(200).await;
    create_webhook(&app, &acme.key, &receiver.url("/hook"), &["ticket.created"]).await;

    let body = json!({"subject": "Lost parcel", "entityId": acme.entity.id,
                      "visitorEmail": "zoe@example.com"});
    let first = twice(&app, &acme, "/tickets", body).await;
    assert_eq!(first.status, 201, "{}", first.text);

    assert_eq!(count(&app, "tickets", acme.company.id, "").await, 1);
    assert_eq!(events(&app, &acme, "ticket.created").await, 1);
    let emails = count(&app, "outbox_jobs", acme.company.id, "AND kind = 'email'").await;
    assert_eq!(emails, 1);
    drive_until(&app, "the delivery", || receiver.count() >= 1).await;
    settle(&app).await;
    assert_eq!(receiver.count(), 1);
}

async fn comments_and_escalations_are_replayed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = agent(&app, &acme).await;
    let ticket = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": "Outage", "entityId": acme.entity.id}),
        )
        .await;
    let path = format!("/tickets/{}", id_of(ticket.assert_status(201)));

    let comment = twice(
        &app,
        &acme,
        &format!("{path}/comments"),
        json!({"body": "Looking"}),
    )
    .await;
    assert_eq!(comment.status, 201, "{}", comment.text);
    assert_eq!(count(&app, "ticket_comments", acme.company.id, "").await, 1);
    assert_eq!(events(&app, &acme, "comment.created").await, 1);

    let escalation = twice(
        &app,
        &acme,
        &format!("{path}/escalate"),
        json!({"escalateToId": ann, "reason": "VIP"}),
    )
    .await;
    assert_eq!(escalation.status, 200, "{}", escalation.text);
    assert_eq!(events(&app, &acme, "ticket.escalated").await, 1);
}

async fn chat_sessions_and_messages_are_replayed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = twice(
        &app,
        &acme,
        "/chat/sessions",
        json!({"entityId": acme.entity.id, "visitorName": "Vic"}),
    )
    .await;
    assert_eq!(session.status, 201, "{}", session.text);
    assert_eq!(count(&app, "chat_sessions", acme.company.id, "").await, 1);

    let path = format!("/chat/sessions/{}/messages", id_of(&session.body));
    let before = count(&app, "chat_messages", acme.company.id, "").await;
    let message = twice(
        &app,
        &acme,
        &path,
        json!({"body": "Hello?", "senderType": "visitor"}),
    )
    .await;
    assert_eq!(message.status, 201, "{}", message.text);
    let after = count(&app, "chat_messages", acme.company.id, "").await;
    assert_eq!(after, before + 1);
}

async fn kb_articles_are_replayed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let article = twice(
        &app,
        &acme,
        "/kb/articles",
        json!({"title": "Resetting a password", "content": "Click the link.", "entityId": acme.entity.id}),
    )
    .await;
    assert_eq!(article.status, 201, "{}", article.text);
    assert_eq!(count(&app, "kb_articles", acme.company.id, "").await, 1);
}

async fn a_replayed_webhook_shows_the_first_secret(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let body = json!({"name": "Receiver", "url": "http://127.0.0.1:9/hook",
                      "events": ["ticket.created"]});
    let webhook = twice(&app, &acme, "/company/webhooks", body).await;
    assert_eq!(webhook.status, 201, "{}", webhook.text);
    assert!(webhook.body["secret"].is_string(), "{}", webhook.text);
    assert_eq!(count(&app, "webhooks", acme.company.id, "").await, 1);
}

async fn a_replayed_api_key_is_the_same_working_key(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let created = twice(
        &app,
        &acme,
        "/api-keys",
        json!({"name": "ci", "scopes": ["tickets:read"]}),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.text);
    // The company's own key and the one created.
    assert_eq!(count(&app, "api_keys", acme.company.id, "").await, 2);
    let key = created.body["key"].as_str().expect("key");
    app.get("/tickets", key).await.assert_status(200);
}

async fn widget_sessions_are_replayed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let body = json!({"widgetKey": acme.entity.widget_key_test, "visitorName": "Vic"});
    let send = || async {
        TestResponse::from(
            app.client
                .post(app.url("/widget/v1/sessions"))
                .header("Idempotency-Key", "chat-1")
                .json(&body)
                .send()
                .await,
        )
        .await
    };
    let first = send().await;
    assert_eq!(first.status, 201, "{}", first.text);
    let repeat = send().await;
    assert_replayed(&first, &repeat);
    assert_eq!(count(&app, "chat_sessions", acme.company.id, "").await, 1);
}

/// The visitor's other POSTs, keyed in the visitor token's company and
/// mode: a repeat gets the first answer, and nothing is stored twice.
async fn widget_uploads_and_ratings_are_replayed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (chat, token) = crate::csat::open_chat(&app, &acme).await;
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0".to_vec();
    let upload = || async {
        TestResponse::from(
            app.client
                .post(app.url("/widget/v1/attachments?filename=shot.png"))
                .header("Authorization", format!("Bearer {token}"))
                .header("Idempotency-Key", "shot-1")
                .body(png.clone())
                .send()
                .await,
        )
        .await
    };
    let first = upload().await;
    assert_eq!(first.status, 201, "{}", first.text);
    assert_replayed(&first, &upload().await);
    assert_eq!(count(&app, "attachments", acme.company.id, "").await, 1);

    crate::csat::close_chat(&app, &acme, &chat).await;
    let rate = || async {
        TestResponse::from(
            app.client
                .post(app.url("/widget/v1/ratings"))
                .header("Authorization", format!("Bearer {token}"))
                .header("Idempotency-Key", "rating-1")
                .json(&json!({"score": 4, "comment": "quick"}))
                .send()
                .await,
        )
        .await
    };
    let first = rate().await;
    assert_eq!(first.status, 201, "{}", first.text);
    assert_replayed(&first, &rate().await);
    assert_eq!(count(&app, "ratings", acme.company.id, "").await, 1);
}

async fn browsers_may_send_the_key_to_the_widget(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let preflight = app
        .client
        .request(reqwest::Method::OPTIONS, app.url("/widget/v1/sessions"))
        .header("Origin", "https://shop.example")
        .header("Access-Control-Request-Method", "POST")
        .header(
            "Access-Control-Request-Headers",
            "content-type, idempotency-key",
        )
        .send()
        .await
        .expect("preflight");
    let allowed = preflight
        .headers()
        .get("access-control-allow-headers")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    assert!(allowed.contains("idempotency-key"), "{allowed}");
}

/// A key without `scope` (kept for the refusal tests).
pub async fn key_without(app: &TestApp, acme: &TestCompany, scope: Scope) -> String {
    let scopes = ScopeSet::all().without(scope);
    app.key(acme.company.id, Mode::Test, scopes).await
}
