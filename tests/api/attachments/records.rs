//! `attachmentIds` on tickets and comments: the records carry the list
//! with signed links; another company's, the other mode's, an attached or
//! an unknown upload is 400 and changes nothing.

use super::*;
use supportdesk::auth::{Mode, ScopeSet};

backend_tests!(
    a_ticket_carries_its_attachments,
    a_comment_carries_its_attachments,
    another_companys_upload_is_400,
    the_other_modes_upload_is_400,
    an_upload_attaches_to_one_record_only,
    more_than_ten_ids_is_400,
    the_ticket_event_carries_the_attachments,
    an_event_a_worker_records_carries_the_links,
);

async fn a_ticket_carries_its_attachments(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let file = uploaded(&app, &acme, b"the log").await;
    let r = ticket_with(&app, &acme, json!([file["id"]])).await;
    let ticket = r.assert_status(201);
    let listed = &ticket["attachments"][0];
    assert_eq!(listed["id"], file["id"]);
    assert_eq!(listed["filename"], "notes.txt");
    assert_eq!(listed["contentType"], "text/plain");
    assert_eq!(listed["size"], 7);
    let url = listed["url"].as_str().expect("url");
    assert!(url.starts_with(&app.url(&format!("/files/{}?exp=", id_of(&file)))));
    let got = app
        .get(&format!("/tickets/{}", id_of(ticket)), &acme.key)
        .await;
    assert_eq!(got.assert_status(200)["attachments"][0]["id"], file["id"]);
}

async fn a_comment_carries_its_attachments(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ticket = ticket_with(&app, &acme, json!([])).await;
    let ticket_id = id_of(ticket.assert_status(201));
    let file = uploaded(&app, &acme, b"screenshot").await;
    let path = format!("/tickets/{ticket_id}/comments");
    let r = app
        .post(
            &path,
            &acme.key,
            json!({"body": "see file", "attachmentIds": [file["id"]]}),
        )
        .await;
    assert_eq!(r.assert_status(201)["attachments"][0]["id"], file["id"]);
    let listed = app.get(&path, &acme.key).await;
    assert_eq!(
        listed.assert_status(200)["data"][0]["attachments"][0]["id"],
        file["id"]
    );
    // The ticket's own list leaves its comments' files out.
    let got = app.get(&format!("/tickets/{ticket_id}"), &acme.key).await;
    assert_eq!(got.assert_status(200)["attachments"], json!([]));
}

async fn another_companys_upload_is_400(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    let foreign = uploaded(&app, &other, b"theirs").await;
    let r = ticket_with(&app, &acme, json!([foreign["id"]])).await;
    assert_invalid(&r, &["attachmentIds"]);
    let listed = app.get("/tickets", &acme.key).await;
    assert_eq!(listed.assert_status(200)["data"], json!([]));
}

async fn the_other_modes_upload_is_400(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    let r = upload_raw(&app, &live, "live.txt", "text/plain", b"live".to_vec()).await;
    let live_file = r.assert_status(201).clone();
    let r = ticket_with(&app, &acme, json!([live_file["id"]])).await;
    assert_invalid(&r, &["attachmentIds"]);
    let r = app
        .get(&format!("/attachments/{}", id_of(&live_file)), &acme.key)
        .await;
    r.assert_error(404, "not_found");
}

async fn an_upload_attaches_to_one_record_only(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let file = uploaded(&app, &acme, b"once").await;
    ticket_with(&app, &acme, json!([file["id"]]))
        .await
        .assert_status(201);
    let r = ticket_with(&app, &acme, json!([file["id"]])).await;
    assert_invalid(&r, &["attachmentIds"]);
}

async fn more_than_ten_ids_is_400(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let mut ids = Vec::new();
    for i in 0..11 {
        ids.push(uploaded(&app, &acme, format!("file {i}").as_bytes()).await["id"].clone());
    }
    let r = ticket_with(&app, &acme, json!(ids)).await;
    assert_invalid(&r, &["attachmentIds"]);
}

async fn the_ticket_event_carries_the_attachments(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let file = uploaded(&app, &acme, b"for the hook").await;
    ticket_with(&app, &acme, json!([file["id"]]))
        .await
        .assert_status(201);
    let rows = supportdesk::on_db!(&app.state.db, c => sqlx::query_as::<_, (sqlx::types::Json<Value>,)>(
        "SELECT data FROM events WHERE name = 'ticket.created'")
        .fetch_all(c)
        .await
        .expect("events read"));
    let data = &rows[0].0.0;
    let listed = &data["attachments"][0];
    assert_eq!(listed["id"], file["id"], "{data}");
    assert!(listed["url"].as_str().is_some_and(|u| u.contains("sig=")));
}

/// The escalation rules worker writes `ticket.escalated` outside any
/// request: its attachments carry signed links all the same.
async fn an_event_a_worker_records_carries_the_links(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let file = uploaded(&app, &acme, b"for the rule").await;
    let ticket = ticket_with(&app, &acme, json!([file["id"]])).await;
    let ticket_id = ticket.assert_status(201)["id"].clone();
    let agent = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Ann", "email": "ann@example.com"}),
        )
        .await;
    let rule = json!({"name": "At once", "conditions": {"minutesSinceCreated": 0},
        "action": {"escalateToId": agent.assert_status(201)["id"]}});
    app.put(
        "/settings/escalation-rules",
        &acme.key,
        json!({ "rules": [rule] }),
    )
    .await
    .assert_status(200);
    let signer = app.state.link_signer();
    let fired =
        supportdesk::tickets::rules::run_pass(&app.state.db, app.state.clock.now(), &signer)
            .await
            .expect("pass runs");
    assert_eq!(fired, 1);
    let rows = supportdesk::on_db!(&app.state.db, c => sqlx::query_as::<_, (sqlx::types::Json<Value>,)>(
        "SELECT data FROM events WHERE name = 'ticket.escalated'")
        .fetch_all(c)
        .await
        .expect("events read"));
    let data = &rows[0].0.0;
    assert_eq!(data["id"], ticket_id, "{data}");
    let listed = &data["attachments"][0];
    assert!(
        listed["url"].as_str().is_some_and(|u| u.contains("sig=")),
        "{data}"
    );
}
