//! Merging a ticket into another: comments, attachments and tags move, the
//! source is closed with `mergedInto` and a link both ways, refuses later
//! comments, and an undo within the window puts both back.

use chrono::Duration;
use serde_json::{Value, json};

use super::{bodies, comment, comment_total, get_ticket, links_of, quiet, subscribe, ticket};
use crate::actors::key_actor;
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany, assert_invalid};

backend_tests!(
    a_merge_moves_comments_and_tags_and_closes_the_source,
    a_merged_ticket_refuses_comments_naming_the_target,
    a_merge_emits_ticket_merged_with_its_actor,
    undo_restores_counts_links_and_status,
    undo_after_the_window_is_refused,
    a_ticket_is_not_merged_into_itself_or_a_merged_one,
    search_finds_the_target_by_a_moved_comment,
);

/// A source with two comments and a tag, and a target with one comment and
/// another tag; their ids.
async fn pair(app: &TestApp, acme: &TestCompany) -> (String, String) {
    let source = ticket(app, acme, "Refund, again").await;
    let target = ticket(app, acme, "Refund").await;
    for body in ["First", "Second"] {
        comment(app, acme, &source, json!({"body": body}))
            .await
            .assert_status(201);
    }
    comment(app, acme, &target, json!({"body": "Original"}))
        .await
        .assert_status(201);
    for (id, tag) in [(&source, "billing"), (&target, "vip")] {
        app.patch(&format!("/tickets/{id}"), &acme.key, json!({"tags": [tag]}))
            .await
            .assert_status(200);
    }
    (source, target)
}

async fn merge(app: &TestApp, acme: &TestCompany, source: &str, target: &str) -> Value {
    let r = app
        .post(
            &format!("/tickets/{source}/merge"),
            &acme.key,
            json!({"into": target}),
        )
        .await;
    r.assert_status(200).clone()
}

async fn a_merge_moves_comments_and_tags_and_closes_the_source(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (source, target) = pair(&app, &acme).await;

    let merged = merge(&app, &acme, &source, &target).await;
    assert_eq!(merged["status"], "CLOSED");
    assert_eq!(merged["mergedInto"], json!(target));
    assert_eq!(
        links_of(&merged),
        vec![(target.clone(), "merged_into".into())]
    );
    let into = get_ticket(&app, &acme, &target).await;
    assert_eq!(
        links_of(&into),
        vec![(source.clone(), "merged_from".into())]
    );
    assert_eq!(into["tags"], json!(["billing", "vip"]));
    assert_eq!(comment_total(&app, &acme, &target).await, 3);
    assert_eq!(comment_total(&app, &acme, &source).await, 0);
}

async fn a_merged_ticket_refuses_comments_naming_the_target(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (source, target) = pair(&app, &acme).await;
    merge(&app, &acme, &source, &target).await;

    let r = comment(&app, &acme, &source, json!({"body": "Late"})).await;
    r.assert_error(409, "ticket_merged");
    assert_eq!(r.body["mergedInto"], json!(target));
    assert_eq!(comment_total(&app, &acme, &source).await, 0);
}

async fn a_merge_emits_ticket_merged_with_its_actor(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    subscribe(&app, &acme, &["ticket.merged"]).await;
    let (source, target) = pair(&app, &acme).await;
    merge(&app, &acme, &source, &target).await;

    let sent = bodies(&app, &acme)
        .await
        .remove("ticket.merged")
        .unwrap_or_default();
    assert_eq!(sent.len(), 1);
    let data = &sent[0]["data"];
    assert_eq!(
        (
            &data["id"],
            &data["mergedInto"],
            &data["target"]["id"],
            &data["undone"]
        ),
        (
            &json!(source),
            &json!(target),
            &json!(target),
            &json!(false)
        )
    );
    assert_eq!(sent[0]["actor"], key_actor(&app, &acme).await);
}

async fn undo_restores_counts_links_and_status(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (source, target) = pair(&app, &acme).await;
    app.patch(
        &format!("/tickets/{source}"),
        &acme.key,
        json!({"status": "IN_PROGRESS"}),
    )
    .await
    .assert_status(200);
    let before = get_ticket(&app, &acme, &target).await;
    merge(&app, &acme, &source, &target).await;

    let r = app
        .post(
            &format!("/tickets/{source}/merge/undo"),
            &acme.key,
            json!({}),
        )
        .await;
    let restored = r.assert_status(200);
    assert_eq!(restored["status"], "IN_PROGRESS");
    assert_eq!(restored["mergedInto"], Value::Null);
    assert!(links_of(restored).is_empty());
    let into = get_ticket(&app, &acme, &target).await;
    assert!(links_of(&into).is_empty());
    assert_eq!(into["tags"], before["tags"]);
    assert_eq!(comment_total(&app, &acme, &source).await, 2);
    assert_eq!(comment_total(&app, &acme, &target).await, 1);
    // And the source takes comments again.
    comment(&app, &acme, &source, json!({"body": "Back"}))
        .await
        .assert_status(201);
}

async fn undo_after_the_window_is_refused(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| {
        c.merge_undo = std::time::Duration::from_secs(600)
    })
    .await;
    let acme = app.company().await;
    let (source, target) = pair(&app, &acme).await;
    merge(&app, &acme, &source, &target).await;

    app.state.clock.advance(Duration::minutes(11));
    let r = app
        .post(
            &format!("/tickets/{source}/merge/undo"),
            &acme.key,
            json!({}),
        )
        .await;
    r.assert_error(409, "undo_expired");
    assert_eq!(
        get_ticket(&app, &acme, &source).await["mergedInto"],
        json!(target)
    );
}

async fn a_ticket_is_not_merged_into_itself_or_a_merged_one(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (source, target) = pair(&app, &acme).await;
    let third = ticket(&app, &acme, "Third").await;

    let r = app
        .post(
            &format!("/tickets/{target}/merge"),
            &acme.key,
            json!({"into": target}),
        )
        .await;
    assert_invalid(&r, &["into"]);
    merge(&app, &acme, &source, &target).await;
    let r = app
        .post(
            &format!("/tickets/{third}/merge"),
            &acme.key,
            json!({"into": source}),
        )
        .await;
    r.assert_error(409, "ticket_merged");
    assert_eq!(get_ticket(&app, &acme, &third).await["status"], "OPEN");
}

async fn search_finds_the_target_by_a_moved_comment(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (source, target) = pair(&app, &acme).await;
    comment(
        &app,
        &acme,
        &source,
        json!({"body": "The zeppelin arrived broken"}),
    )
    .await
    .assert_status(201);
    merge(&app, &acme, &source, &target).await;

    let r = app.get("/tickets?q=zeppelin", &acme.key).await;
    let found: Vec<Value> = r.assert_status(200)["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|t| t["id"].clone())
        .collect();
    assert_eq!(found, vec![json!(target)]);
}
