//! Each list pages with `after`: two pages, then `nextCursor` null.

use serde_json::json;

use super::{after, ids, ticket};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    tickets_page_with_cursors,
    chat_sessions_page_with_cursors,
    kb_articles_page_with_cursors,
    ticket_comments_page_with_cursors,
    ticket_activities_page_with_cursors,
    webhook_deliveries_page_with_cursors,
);

/// Reads `path` (which lists exactly three records) in pages of two: the
/// first ends with a cursor, the second holds the rest and ends with null.
/// Returns the ids in the order read.
async fn two_pages(app: &TestApp, acme: &TestCompany, path: &str) -> Vec<String> {
    let joiner = if path.contains('?') { '&' } else { '?' };
    let first_path = format!("{path}{joiner}limit=2");
    let first = app.get(&first_path, &acme.key).await;
    let first = first.assert_status(200).clone();
    assert_eq!(first["total"], 3, "{path}");
    let cursor = first["nextCursor"].as_str().expect("a next cursor");
    let second = app.get(&after(&first_path, cursor), &acme.key).await;
    let second = second.assert_status(200).clone();
    assert_eq!(second["nextCursor"], json!(null), "{path}");
    let mut read = ids(&first);
    read.extend(ids(&second));
    read
}

async fn tickets_page_with_cursors(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let mut made = Vec::new();
    for n in 0..3 {
        made.push(ticket(&app, &acme, &format!("T{n}")).await);
    }
    made.reverse();
    assert_eq!(two_pages(&app, &acme, "/tickets").await, made);
}

async fn chat_sessions_page_with_cursors(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let mut made = Vec::new();
    for _ in 0..3 {
        let r = app
            .post(
                "/chat/sessions",
                &acme.key,
                json!({"entityId": acme.entity.id}),
            )
            .await;
        made.push(r.assert_status(201)["id"].as_str().expect("id").to_string());
    }
    made.reverse();
    assert_eq!(two_pages(&app, &acme, "/chat/sessions").await, made);
}

async fn kb_articles_page_with_cursors(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let mut made = Vec::new();
    for n in 0..3 {
        let body = json!({
            "entityId": acme.entity.id,
            "title": format!("Article {n}"),
            "content": "Text.",
            "isPublished": true,
        });
        let r = app.post("/kb/articles", &acme.key, body).await;
        made.push(r.assert_status(201)["id"].as_str().expect("id").to_string());
    }
    made.reverse();
    assert_eq!(two_pages(&app, &acme, "/kb/articles").await, made);
}

async fn ticket_comments_page_with_cursors(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = ticket(&app, &acme, "Chatty").await;
    let mut made = Vec::new();
    for n in 0..3 {
        let r = app
            .post(
                &format!("/tickets/{id}/comments"),
                &acme.key,
                json!({"body": format!("Comment {n}")}),
            )
            .await;
        made.push(r.assert_status(201)["id"].as_str().expect("id").to_string());
    }
    let path = format!("/tickets/{id}/comments");
    assert_eq!(two_pages(&app, &acme, &path).await, made);
}

async fn ticket_activities_page_with_cursors(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = ticket(&app, &acme, "Busy").await;
    for status in ["IN_PROGRESS", "RESOLVED"] {
        app.patch(
            &format!("/tickets/{id}"),
            &acme.key,
            json!({"status": status}),
        )
        .await
        .assert_status(200);
    }
    let path = format!("/tickets/{id}/activities");
    let whole = app.get(&path, &acme.key).await;
    let whole = ids(whole.assert_status(200));
    assert_eq!(two_pages(&app, &acme, &path).await, whole);
}

async fn webhook_deliveries_page_with_cursors(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = app
        .post(
            "/company/webhooks",
            &acme.key,
            json!({"name": "Receiver", "url": "http://127.0.0.1:9/hook", "events": ["ticket.created"]}),
        )
        .await;
    let webhook = r.assert_status(201)["id"].as_str().expect("id").to_string();
    for n in 0..3 {
        ticket(&app, &acme, &format!("Hooked {n}")).await;
    }
    let path = format!("/company/webhooks/{webhook}/deliveries");
    let whole = app.get(&path, &acme.key).await;
    let whole = ids(whole.assert_status(200));
    assert_eq!(whole.len(), 3);
    assert_eq!(two_pages(&app, &acme, &path).await, whole);
}
