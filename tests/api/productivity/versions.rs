//! Versions: every change of a ticket or chat grows its `version`, its
//! answers carry it as `ETag`, and a write with `If-Match` on another
//! version is refused with the changes since and changes nothing.

use reqwest::Method;
use serde_json::json;

use super::{comment_count, read_ticket, send_with, ticket};
use crate::backend_tests;
use crate::csat::open_chat;
use crate::support::{Backend, TestApp};

backend_tests!(
    every_ticket_change_grows_its_version_and_etag,
    a_stale_if_match_on_an_update_is_412_with_the_changes_and_changes_nothing,
    a_stale_if_match_on_a_reply_is_412_and_adds_nothing,
    a_stale_if_match_on_a_snooze_is_412_and_leaves_the_ticket_awake,
    a_stale_if_match_on_a_merge_is_412_and_merges_nothing,
    a_current_if_match_is_accepted,
    a_malformed_if_match_is_400,
    a_chat_session_answers_with_its_version,
);

async fn every_ticket_change_grows_its_version_and_etag(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = ticket(&app, &acme).await;
    let r = read_ticket(&app, &acme, &id).await;
    assert_eq!(r.assert_status(200)["version"], 1);
    assert_eq!(r.header("etag"), Some("\"1\""));
    let path = format!("/tickets/{id}");
    let r = app
        .patch(&path, &acme.key, json!({"status": "PENDING"}))
        .await;
    assert_eq!(r.assert_status(200)["version"], 2);
    assert_eq!(r.header("etag"), Some("\"2\""));
    app.post(
        &format!("{path}/comments"),
        &acme.key,
        json!({"body": "Hi"}),
    )
    .await
    .assert_status(201);
    let r = read_ticket(&app, &acme, &id).await;
    assert_eq!(r.assert_status(200)["version"], 3);
    assert_eq!(r.header("etag"), Some("\"3\""));
}

async fn a_stale_if_match_on_an_update_is_412_with_the_changes_and_changes_nothing(
    backend: Backend,
) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = ticket(&app, &acme).await;
    let path = format!("/tickets/{id}");
    app.patch(&path, &acme.key, json!({"priority": "HIGH"}))
        .await
        .assert_status(200);
    let r = send_with(
        &app,
        Method::PATCH,
        &path,
        &acme.key,
        &[("If-Match", "\"1\"")],
        json!({"status": "PENDING"}),
    )
    .await;
    r.assert_error(412, "version_conflict");
    assert_eq!(r.body["currentVersion"], 2);
    assert_eq!(r.body["details"][0]["field"], "priority");
    assert_eq!(r.body["changes"][0]["type"], "priority_changed");
    assert_eq!(r.body["changes"][0]["to"], "HIGH");
    assert_eq!(r.body["changes"][0]["version"], 2);
    let now = read_ticket(&app, &acme, &id).await;
    assert_eq!(now.assert_status(200)["status"], "OPEN");
    assert_eq!(now.body["version"], 2);
}

async fn a_stale_if_match_on_a_snooze_is_412_and_leaves_the_ticket_awake(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = ticket(&app, &acme).await;
    let path = format!("/tickets/{id}");
    app.patch(&path, &acme.key, json!({"priority": "HIGH"}))
        .await
        .assert_status(200);
    let until = (app.state.clock.now().0 + chrono::Duration::hours(1)).to_rfc3339();
    let r = send_with(
        &app,
        Method::PATCH,
        &path,
        &acme.key,
        &[("If-Match", "\"1\"")],
        json!({"snoozedUntil": until}),
    )
    .await;
    r.assert_error(412, "version_conflict");
    let now = read_ticket(&app, &acme, &id).await;
    assert_eq!(
        now.assert_status(200)["snoozedUntil"],
        serde_json::Value::Null
    );
}

async fn a_stale_if_match_on_a_reply_is_412_and_adds_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = ticket(&app, &acme).await;
    let path = format!("/tickets/{id}");
    app.patch(&path, &acme.key, json!({"tags": ["vip"]}))
        .await
        .assert_status(200);
    let r = send_with(
        &app,
        Method::POST,
        &format!("{path}/comments"),
        &acme.key,
        &[("If-Match", "\"1\"")],
        json!({"body": "Answer based on what I saw"}),
    )
    .await;
    r.assert_error(412, "version_conflict");
    assert_eq!(r.body["details"][0]["field"], "tags");
    assert_eq!(comment_count(&app, &acme, &id).await, 0);
}

async fn a_stale_if_match_on_a_merge_is_412_and_merges_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let source = ticket(&app, &acme).await;
    let target = ticket(&app, &acme).await;
    app.patch(
        &format!("/tickets/{source}"),
        &acme.key,
        json!({"priority": "HIGH"}),
    )
    .await
    .assert_status(200);
    let r = send_with(
        &app,
        Method::POST,
        &format!("/tickets/{source}/merge"),
        &acme.key,
        &[("If-Match", "\"1\"")],
        json!({"into": target}),
    )
    .await;
    r.assert_error(412, "version_conflict");
    assert_eq!(
        (&r.body["currentVersion"], &r.body["details"][0]["field"]),
        (&json!(2), &json!("priority"))
    );
    let now = read_ticket(&app, &acme, &source).await;
    assert_eq!(
        (&now.assert_status(200)["mergedInto"], &now.body["status"]),
        (&serde_json::Value::Null, &json!("OPEN"))
    );
}

async fn a_current_if_match_is_accepted(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = ticket(&app, &acme).await;
    let r = send_with(
        &app,
        Method::PATCH,
        &format!("/tickets/{id}"),
        &acme.key,
        &[("If-Match", "\"1\"")],
        json!({"status": "PENDING"}),
    )
    .await;
    assert_eq!(r.assert_status(200)["status"], "PENDING");
    assert_eq!(r.header("etag"), Some("\"2\""));
}

async fn a_malformed_if_match_is_400(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let id = ticket(&app, &acme).await;
    let r = send_with(
        &app,
        Method::PATCH,
        &format!("/tickets/{id}"),
        &acme.key,
        &[("If-Match", "yesterday")],
        json!({"status": "PENDING"}),
    )
    .await;
    crate::support::assert_invalid(&r, &["If-Match"]);
    assert_eq!(read_ticket(&app, &acme, &id).await.body["status"], "OPEN");
}

async fn a_chat_session_answers_with_its_version(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (session, _) = open_chat(&app, &acme).await;
    let path = format!("/chat/sessions/{session}");
    let before = app.get(&path, &acme.key).await;
    let version = before.assert_status(200)["version"]
        .as_i64()
        .expect("version");
    assert_eq!(
        before.header("etag"),
        Some(format!("\"{version}\"").as_str())
    );
    let r = app.patch(&path, &acme.key, json!({"tags": ["vip"]})).await;
    assert_eq!(r.assert_status(200)["version"], version + 1);
    assert_eq!(
        r.header("etag"),
        Some(format!("\"{}\"", version + 1).as_str())
    );
}
