//! What visitors' unattached uploads may hold: a quota per chat session and
//! one per company (413 `quota_exceeded`, nothing kept), freed by sending
//! the files; and their shorter life before the sweeper deletes them.

use super::messages::{token_of, visitor_upload};
use super::*;
use crate::chat::new_session;
use supportdesk::attachments::sweep::run_pass;

backend_tests!(
    a_session_past_its_upload_quota_is_refused,
    sending_the_files_frees_the_sessions_quota,
    a_company_past_its_visitor_upload_quota_is_refused,
    an_upload_that_would_cross_the_quota_is_refused_and_not_kept,
    unattached_visitor_uploads_expire_before_a_keys,
);

/// Room for `files` PNG uploads.
fn room_for(files: u64) -> u64 {
    files * PNG.len() as u64
}

async fn a_session_past_its_upload_quota_is_refused(backend: Backend) {
    let app = TestApp::spawn_with(backend, |config| {
        config.visitor_session_upload_quota = room_for(2);
    })
    .await;
    let acme = app.company().await;
    let full = new_session(&app, &acme, json!({"visitorName": "Vic"})).await;
    let other = new_session(&app, &acme, json!({"visitorName": "Val"})).await;
    for _ in 0..2 {
        visitor_upload(&app, &token_of(&full), "shot.png", PNG.to_vec())
            .await
            .assert_status(201);
    }
    let r = visitor_upload(&app, &token_of(&full), "shot.png", PNG.to_vec()).await;
    r.assert_error(413, "quota_exceeded");
    assert!(
        r.body["error"]
            .as_str()
            .is_some_and(|text| text.contains("session's upload quota")),
        "{}",
        r.text
    );
    // Another chat of the same company has its own quota.
    visitor_upload(&app, &token_of(&other), "shot.png", PNG.to_vec())
        .await
        .assert_status(201);
}

async fn sending_the_files_frees_the_sessions_quota(backend: Backend) {
    let app = TestApp::spawn_with(backend, |config| {
        config.visitor_session_upload_quota = room_for(1);
    })
    .await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({"visitorName": "Vic"})).await;
    let token = token_of(&session);
    let r = visitor_upload(&app, &token, "shot.png", PNG.to_vec()).await;
    let file = r.assert_status(201).clone();
    app.post(
        &format!("/chat/sessions/{}/messages", id_of(&session)),
        &acme.key,
        json!({"body": "here", "senderType": "visitor", "attachmentIds": [file["id"]]}),
    )
    .await
    .assert_status(201);
    visitor_upload(&app, &token, "shot.png", PNG.to_vec())
        .await
        .assert_status(201);
}

async fn a_company_past_its_visitor_upload_quota_is_refused(backend: Backend) {
    let app = TestApp::spawn_with(backend, |config| {
        config.visitor_company_upload_quota = room_for(2);
    })
    .await;
    let acme = app.company().await;
    let globex = app.company().await;
    for name in ["Vic", "Val"] {
        let session = new_session(&app, &acme, json!({"visitorName": name})).await;
        visitor_upload(&app, &token_of(&session), "shot.png", PNG.to_vec())
            .await
            .assert_status(201);
    }
    let third = new_session(&app, &acme, json!({"visitorName": "Vin"})).await;
    let r = visitor_upload(&app, &token_of(&third), "shot.png", PNG.to_vec()).await;
    r.assert_error(413, "quota_exceeded");
    assert!(
        r.body["error"]
            .as_str()
            .is_some_and(|text| text.contains("company's upload quota")),
        "{}",
        r.text
    );
    // Another company's visitors have their own.
    let elsewhere = new_session(&app, &globex, json!({"visitorName": "Vic"})).await;
    visitor_upload(&app, &token_of(&elsewhere), "shot.png", PNG.to_vec())
        .await
        .assert_status(201);
}

async fn an_upload_that_would_cross_the_quota_is_refused_and_not_kept(backend: Backend) {
    let app = TestApp::spawn_with(backend, |config| {
        config.visitor_session_upload_quota = room_for(1) + 10;
    })
    .await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({"visitorName": "Vic"})).await;
    let token = token_of(&session);
    visitor_upload(&app, &token, "shot.png", PNG.to_vec())
        .await
        .assert_status(201);
    let (rows, files) = (attachment_rows(&app).await, stored_files(&app).len());

    let mut larger = PNG.to_vec();
    larger.extend_from_slice(&[0; 64]);
    visitor_upload(&app, &token, "larger.png", larger)
        .await
        .assert_error(413, "quota_exceeded");
    assert_eq!(
        (attachment_rows(&app).await, stored_files(&app).len()),
        (rows, files)
    );
}

async fn unattached_visitor_uploads_expire_before_a_keys(backend: Backend) {
    let app = TestApp::spawn_with(backend, |config| {
        config.run_workers = false;
        config.visitor_orphan_age = std::time::Duration::from_secs(3600);
    })
    .await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({"visitorName": "Vic"})).await;
    let r = visitor_upload(&app, &token_of(&session), "shot.png", PNG.to_vec()).await;
    let visitors = r.assert_status(201).clone();
    let keys = uploaded(&app, &acme, b"a key's upload").await;

    app.state.clock.advance(chrono::TimeDelta::hours(2));
    run_pass(&app.state.db, &app.state.attachments, app.state.clock.now())
        .await
        .expect("sweep");
    app.get(&format!("/attachments/{}", id_of(&visitors)), &acme.key)
        .await
        .assert_error(404, "not_found");
    app.get(&format!("/attachments/{}", id_of(&keys)), &acme.key)
        .await
        .assert_status(200);
}
