//! `GET /audit-log`: the company's own entries only, its filters, its
//! cursor paging and its CSV and NDJSON exports, for `audit:read` only.

use reqwest::Method;
use serde_json::{Value, json};
use supportdesk::auth::{Mode, Scope, ScopeSet};

use super::{entries_of, key_id};
use crate::accounts::{agent_with_password, sign_in};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    another_companys_entries_are_invisible,
    the_list_filters_by_actor_target_and_time,
    the_list_pages_by_cursor,
    the_csv_export_has_a_row_per_entry,
    the_ndjson_export_has_a_line_per_entry,
    a_key_without_audit_read_is_refused,
    an_agent_cannot_read_the_log_and_an_admin_can,
);

async fn role(app: &TestApp, acme: &TestCompany, name: &str) -> Value {
    app.post(
        "/roles",
        &acme.key,
        json!({"name": name, "scopes": ["tickets:read"]}),
    )
    .await
    .assert_status(201)
    .clone()
}

async fn another_companys_entries_are_invisible(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let globex = app.company().await;
    let theirs = role(&app, &globex, "Theirs").await;

    let ours = app.get("/audit-log?limit=200", &acme.key).await;

    let data = ours.assert_status(200)["data"]
        .as_array()
        .expect("data")
        .clone();
    assert!(!data.is_empty());
    assert!(
        data.iter().all(|e| e["target"]["id"] != theirs["id"]),
        "{data:?}"
    );
    let by_target = format!("/audit-log?targetId={}", theirs["id"].as_str().expect("id"));
    assert_eq!(
        app.get(&by_target, &acme.key).await.assert_status(200)["total"],
        0
    );
    assert_eq!(
        app.get(&by_target, &globex.key).await.assert_status(200)["total"],
        1
    );
}

async fn the_list_filters_by_actor_target_and_time(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let first = role(&app, &acme, "First").await;
    app.state.clock.advance(chrono::Duration::hours(1));
    let since = app.state.clock.now();
    let second = role(&app, &acme, "Second").await;

    let by_actor = app
        .get(&format!("/audit-log?actor={actor}"), &acme.key)
        .await;
    let targets: Vec<Value> = by_actor.assert_status(200)["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|e| e["target"]["id"].clone())
        .collect();
    assert_eq!(targets, [second["id"].clone(), first["id"].clone()]);

    let path = format!("/audit-log?targetType=role&from={}", since.to_rfc3339());
    let recent = app.get(&path, &acme.key).await;
    assert_eq!(recent.assert_status(200)["total"], 1);
    assert_eq!(recent.body["data"][0]["target"]["id"], second["id"]);

    let path = format!("/audit-log?action=role.created&to={}", since.to_rfc3339());
    let older = app.get(&path, &acme.key).await;
    assert_eq!(older.assert_status(200)["total"], 1);
    assert_eq!(older.body["data"][0]["target"]["id"], first["id"]);
}

async fn the_list_pages_by_cursor(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    for name in ["A", "B", "C"] {
        role(&app, &acme, name).await;
    }
    let first = app
        .get("/audit-log?action=role.created&limit=2", &acme.key)
        .await;
    let cursor = first.assert_status(200)["nextCursor"]
        .as_str()
        .expect("cursor")
        .to_owned();

    let second = app
        .get(
            &format!("/audit-log?action=role.created&limit=2&after={cursor}"),
            &acme.key,
        )
        .await;

    let names = |page: &Value| -> Vec<Value> {
        page["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(|e| e["changes"]["after"]["name"].clone())
            .collect()
    };
    assert_eq!(names(&first.body), [json!("C"), json!("B")]);
    assert_eq!(names(second.assert_status(200)), [json!("A")]);
    assert_eq!(second.body["nextCursor"], Value::Null);
}

async fn export(app: &TestApp, acme: &TestCompany, accept: &str) -> (String, String) {
    let response = app
        .api(
            Method::GET,
            "/audit-log?action=role.created",
            Some(&acme.key),
        )
        .header("Accept", accept)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status().as_u16(), 200);
    let content_type = response.headers()["content-type"]
        .to_str()
        .expect("type")
        .to_owned();
    (content_type, response.text().await.expect("body"))
}

async fn the_csv_export_has_a_row_per_entry(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    role(&app, &acme, "Alpha").await;
    role(&app, &acme, "Beta, with a comma").await;

    let (content_type, body) = export(&app, &acme, "text/csv").await;

    assert_eq!(content_type, "text/csv; charset=utf-8");
    let lines: Vec<&str> = body.lines().collect();
    assert_eq!(lines.len(), 3, "{body}");
    assert!(lines[0].starts_with("id,seq,at,actorType,actorId,actorName,action,"));
    assert!(lines[1].contains(",role.created,role,"), "{}", lines[1]);
    assert!(lines[1].contains("Beta, with a comma"), "{}", lines[1]);
    assert!(lines[2].contains("Alpha"), "{}", lines[2]);
}

async fn the_ndjson_export_has_a_line_per_entry(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let alpha = role(&app, &acme, "Alpha").await;
    let beta = role(&app, &acme, "Beta").await;

    let (content_type, body) = export(&app, &acme, "application/x-ndjson").await;

    assert_eq!(content_type, "application/x-ndjson");
    let targets: Vec<Value> = body
        .lines()
        .map(|line| {
            serde_json::from_str::<Value>(line).expect("a JSON line")["target"]["id"].clone()
        })
        .collect();
    assert_eq!(targets, [beta["id"].clone(), alpha["id"].clone()]);
}

async fn a_key_without_audit_read_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let scopes = ScopeSet::all().without(Scope::AuditRead);
    let key = app.key(acme.company.id, Mode::Test, scopes).await;

    app.get("/audit-log", &key)
        .await
        .assert_error(403, "insufficient_scope");
}

async fn an_agent_cannot_read_the_log_and_an_admin_can(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "agent@acme.test", "agent").await;
    agent_with_password(&app, &acme, "admin@acme.test", "admin").await;

    let agent = sign_in(&app, "agent@acme.test", "test").await;
    let admin = sign_in(&app, "admin@acme.test", "test").await;

    agent
        .get(&app, "/api/v1/audit-log")
        .await
        .assert_error(403, "insufficient_scope");
    let page = admin.get(&app, "/api/v1/audit-log").await;
    assert!(!entries_of(&app, &acme, "auth.signed_in").await.is_empty());
    assert_eq!(
        page.assert_status(200)["data"][0]["action"],
        "auth.signed_in"
    );
}
