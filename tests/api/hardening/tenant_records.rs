//! What the tenant isolation tests share: company A's records, one of each
//! kind a path or a body can name, and a call of any route with a key.

use std::collections::BTreeMap;

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{TestApp, TestResponse};

pub(super) fn id(r: &TestResponse) -> String {
    r.body["id"]
        .as_str()
        .unwrap_or_else(|| panic!("an id in {}", r.text))
        .to_string()
}

pub(super) async fn call(
    app: &TestApp,
    method: &Method,
    path: &str,
    key: &str,
    body: Option<Value>,
) -> TestResponse {
    let mut request = app.api(method.clone(), path, Some(key));
    if let Some(body) = body {
        request = request.json(&body);
    }
    TestResponse::from(request.send().await).await
}

/// Company A's records, one of each kind a path can name.
pub(super) async fn records_of(
    app: &TestApp,
    key: &str,
    entity: &str,
) -> BTreeMap<&'static str, String> {
    let mut ids = BTreeMap::new();
    ids.insert("entity", entity.to_string());
    let user = app
        .post(
            "/users",
            key,
            json!({"name": "Agent A", "email": "a@a.example"}),
        )
        .await;
    ids.insert("user", id(&user));
    let other_key = app
        .post(
            "/api-keys",
            key,
            json!({"name": "A's key", "scopes": ["tickets:read"]}),
        )
        .await;
    ids.insert("key", id(&other_key));
    let ticket = app
        .post(
            "/tickets",
            key,
            json!({"subject": "A's ticket", "entityId": entity}),
        )
        .await;
    ids.insert("ticket", id(&ticket));
    let category = app
        .post(
            "/kb/categories",
            key,
            json!({"name": "A's category", "entityId": entity}),
        )
        .await;
    ids.insert("category", id(&category));
    let article = app
        .post(
            "/kb/articles",
            key,
            json!({"title": "A's article", "entityId": entity, "isPublished": true}),
        )
        .await;
    ids.insert("article", id(&article));
    let webhook = app
        .post(
            "/company/webhooks",
            key,
            json!({"name": "A's hook", "url": "http://127.0.0.1:9/a", "events": ["ticket.created"]}),
        )
        .await;
    let webhook = id(&webhook);
    let delivery = app
        .post(&format!("/company/webhooks/{webhook}/test"), key, json!({}))
        .await;
    ids.insert("delivery", id(&delivery));
    ids.insert("webhook", webhook);
    let session = app
        .post("/chat/sessions", key, json!({"entityId": entity}))
        .await;
    ids.insert("session", id(&session));
    let team = app
        .post(
            "/teams",
            key,
            json!({"name": "A's team", "memberIds": [ids["user"]]}),
        )
        .await;
    ids.insert("team", id(&team));
    let role = app
        .post(
            "/roles",
            key,
            json!({"name": "A's role", "scopes": ["tickets:read"]}),
        )
        .await;
    ids.insert("role", id(&role));
    let organization = app
        .post(
            "/organizations",
            key,
            json!({"name": "A's organization", "domains": ["a-org.example"]}),
        )
        .await;
    ids.insert("organization", id(&organization));
    let contact = app
        .post(
            "/contacts",
            key,
            json!({"name": "A's contact", "emails": ["contact@a-org.example"]}),
        )
        .await;
    ids.insert("contact", id(&contact));
    let job = app
        .post(
            &format!("/contacts/{}/export", id(&contact)),
            key,
            json!({}),
        )
        .await;
    ids.insert("job", id(&job));
    let channel = app
        .post(
            "/channels/email",
            key,
            json!({"address": "desk@a-org.example", "name": "A's desk", "entityId": entity,
                "inbound": {"kind": "postmark", "secret": "a-secret"}}),
        )
        .await;
    ids.insert("email channel", id(&channel));
    let shared_macro = app
        .post(
            "/macros",
            key,
            json!({"name": "A's macro", "visibility": "shared", "actions": {"priority": "LOW"}}),
        )
        .await;
    ids.insert("macro", id(&shared_macro));
    let automation = app
        .post(
            "/automations",
            key,
            json!({"name": "A's automation", "kind": "trigger", "events": ["ticket.created"],
                   "actions": [{"type": "set_priority", "value": "LOW"}]}),
        )
        .await;
    ids.insert("automation", id(&automation));
    let shared_view = app
        .post(
            "/views",
            key,
            json!({"name": "A's view", "visibility": "shared", "filters": {"status": "OPEN"}}),
        )
        .await;
    ids.insert("view", id(&shared_view));
    app.post(
        "/settings/custom-fields",
        key,
        json!({"key": "a_only_field", "label": "A's field", "type": "text",
               "appliesTo": ["ticket"]}),
    )
    .await
    .assert_status(201);
    ids.insert("custom field", "a_only_field".to_string());
    let calendar = app
        .post(
            "/settings/business-hours",
            key,
            json!({"name": "A's hours", "timezone": "UTC",
                   "weekly": [{"day": "mon", "open": "09:00", "close": "17:00"}]}),
        )
        .await;
    ids.insert("business hours", id(&calendar));
    let attachment = TestResponse::from(
        app.api(Method::POST, "/attachments?filename=a.txt", Some(key))
            .body("A's file")
            .send()
            .await,
    )
    .await;
    ids.insert("attachment", id(&attachment));
    app.post(
        "/chat/agent-presence",
        key,
        json!({"userId": ids["user"], "name": "Agent A", "email": "a@a.example"}),
    )
    .await
    .assert_status(200);
    ids
}
