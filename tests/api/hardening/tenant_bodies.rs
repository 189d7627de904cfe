//! Tenant isolation in what a request carries: another company's ids in
//! bodies and list filters answer exactly like ids that do not exist.

use reqwest::Method;
use serde_json::{Value, json};

use super::tenant_records::{call, id, records_of};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    another_tenants_ids_in_bodies_are_refused_like_unknown_ids,
    another_tenants_entity_filters_answer_like_unknown_ones,
);

/// Ids of another company given in bodies (entityId, parentId,
/// assignedToId, escalateToId, authorId, senderId, categoryId, rule
/// targets) are refused exactly like ids that do not exist: nothing is
/// created, nothing tells them apart.
async fn another_tenants_ids_in_bodies_are_refused_like_unknown_ids(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let a = app.company().await;
    let b = app.company().await;
    let a_ids = records_of(&app, &a.key, &a.entity.id.to_string()).await;
    let b_ticket = app
        .post(
            "/tickets",
            &b.key,
            json!({"subject": "B's ticket", "entityId": b.entity.id}),
        )
        .await;
    let b_ticket = id(&b_ticket);
    let b_article = app
        .post(
            "/kb/articles",
            &b.key,
            json!({"title": "B's article", "entityId": b.entity.id}),
        )
        .await;
    let b_article = id(&b_article);
    let b_session = app
        .post("/chat/sessions", &b.key, json!({"entityId": b.entity.id}))
        .await;
    let b_session = id(&b_session);
    let b_contact = app
        .post("/contacts", &b.key, json!({"name": "B's contact"}))
        .await;
    let b_contact = id(&b_contact);

    type Case = (Method, String, fn(&str) -> Value);
    let cases: Vec<(&str, Case)> = vec![
        (
            "entity",
            (
                Method::POST,
                "/tickets".into(),
                |x| json!({"subject": "S", "entityId": x}),
            ),
        ),
        (
            "entity",
            (
                Method::POST,
                "/entities".into(),
                |x| json!({"name": "N", "parentId": x}),
            ),
        ),
        (
            "entity",
            (
                Method::POST,
                "/kb/articles".into(),
                |x| json!({"title": "T", "entityId": x}),
            ),
        ),
        (
            "entity",
            (
                Method::POST,
                "/kb/categories".into(),
                |x| json!({"name": "N", "entityId": x}),
            ),
        ),
        (
            "entity",
            (
                Method::POST,
                "/chat/sessions".into(),
                |x| json!({"entityId": x}),
            ),
        ),
        (
            "user",
            (
                Method::PATCH,
                format!("/tickets/{b_ticket}"),
                |x| json!({"assignedToId": x}),
            ),
        ),
        (
            "user",
            (
                Method::POST,
                format!("/tickets/{b_ticket}/escalate"),
                |x| json!({"escalateToId": x}),
            ),
        ),
        (
            "user",
            (
                Method::POST,
                format!("/tickets/{b_ticket}/comments"),
                |x| json!({"body": "B", "authorId": x}),
            ),
        ),
        (
            "user",
            (
                Method::POST,
                format!("/chat/sessions/{b_session}/messages"),
                |x| json!({"body": "B", "senderType": "agent", "senderId": x}),
            ),
        ),
        (
            "category",
            (
                Method::PATCH,
                format!("/kb/articles/{b_article}"),
                |x| json!({"categoryId": x}),
            ),
        ),
        (
            "user",
            (
                Method::PUT,
                "/settings/escalation-rules".into(),
                |x| json!({"rules": [{"name": "R", "conditions": {"unassigned": true}, "action": {"escalateToId": x}}]}),
            ),
        ),
        (
            "organization",
            (
                Method::POST,
                "/contacts".into(),
                |x| json!({"name": "C", "organizationId": x}),
            ),
        ),
        (
            "contact",
            (
                Method::POST,
                format!("/contacts/{b_contact}/merge"),
                |x| json!({"into": x}),
            ),
        ),
    ];
    for (kind, (method, path, body)) in cases {
        let foreign = call(&app, &method, &path, &b.key, Some(body(&a_ids[kind]))).await;
        let unknown = call(
            &app,
            &method,
            &path,
            &b.key,
            Some(body(&uuid::Uuid::now_v7().to_string())),
        )
        .await;
        assert_eq!(
            foreign.status, 400,
            "{method} {path} with A's {kind}: {}",
            foreign.text
        );
        assert_eq!(
            (
                foreign.status,
                &foreign.body["code"],
                &foreign.body["details"]
            ),
            (
                unknown.status,
                &unknown.body["code"],
                &unknown.body["details"]
            ),
            "{method} {path}: A's {kind} and an unknown id answer alike"
        );
    }
    app.stop().await;
}

/// Another company's entity as a list filter answers exactly like an entity
/// that does not exist.
async fn another_tenants_entity_filters_answer_like_unknown_ones(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let a = app.company().await;
    let b = app.company().await;
    let a_ids = records_of(&app, &a.key, &a.entity.id.to_string()).await;
    // The ticket and chat lists answer an empty page ...
    for path in ["/tickets", "/chat/sessions"] {
        let foreign = app
            .get(&format!("{path}?entityId={}", a_ids["entity"]), &b.key)
            .await;
        let unknown = app
            .get(&format!("{path}?entityId={}", uuid::Uuid::now_v7()), &b.key)
            .await;
        assert_eq!(foreign.status, unknown.status, "{path}: {}", foreign.text);
        assert_eq!(foreign.status, 200, "{path}: {}", foreign.text);
        assert_eq!(foreign.body["total"], 0, "{path}: {}", foreign.text);
    }
    // ... the knowledge base refuses the filter as a field error.
    for path in ["/kb/articles", "/kb/categories"] {
        let foreign = app
            .get(&format!("{path}?entityId={}", a_ids["entity"]), &b.key)
            .await;
        let unknown = app
            .get(&format!("{path}?entityId={}", uuid::Uuid::now_v7()), &b.key)
            .await;
        assert_eq!(foreign.status, unknown.status, "{path}: {}", foreign.text);
        assert_eq!(foreign.body, unknown.body, "{path}: {}", foreign.text);
        foreign.assert_error(400, "validation_failed");
    }
    app.stop().await;
}
