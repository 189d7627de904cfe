//! Chats past their retention go with their files: the attachment rows of
//! their messages and their visitors' uploads, and the stored bytes no
//! other upload names; an open chat's, and a chat within its retention,
//! stay. Also against the S3-compatible bucket when the tests have one.

use super::messages::{token_of, visitor_upload};
use super::*;
use crate::chat::new_session;
use crate::support::retention_pass;
use std::time::Duration;

backend_tests!(
    a_chat_past_its_retention_goes_with_its_files,
    a_chat_within_its_retention_keeps_its_files,
);

const CHAT_RETENTION: Duration = Duration::from_secs(24 * 3600);

/// A chat whose messages carry a visitor's image and a key's file, and an
/// unsent upload of its visitor; answers its id.
async fn chat_with_files(app: &TestApp, acme: &TestCompany, name: &str) -> String {
    let session = new_session(app, acme, json!({"visitorName": name})).await;
    let token = token_of(&session);
    let r = visitor_upload(app, &token, "shot.png", PNG.to_vec()).await;
    let image = r.assert_status(201).clone();
    let file = uploaded(app, acme, format!("{name}'s file").as_bytes()).await;
    let mut unsent = PNG.to_vec();
    unsent.extend_from_slice(name.as_bytes());
    visitor_upload(app, &token, "unsent.png", unsent)
        .await
        .assert_status(201);
    let id = id_of(&session);
    app.post(
        &format!("/chat/sessions/{id}/messages"),
        &acme.key,
        json!({"body": "files", "senderType": "visitor", "attachmentIds": [image["id"], file["id"]]}),
    )
    .await
    .assert_status(201);
    id
}

async fn close(app: &TestApp, acme: &TestCompany, id: &str) {
    app.patch(
        &format!("/chat/sessions/{id}"),
        &acme.key,
        json!({"status": "CLOSED"}),
    )
    .await
    .assert_status(200);
}

async fn objects(app: &TestApp) -> usize {
    app.state
        .attachments
        .storage
        .count_objects()
        .await
        .expect("listed")
}

async fn retained(backend: Backend) -> TestApp {
    TestApp::spawn_with(backend, |config| {
        config.run_workers = false;
        config.chat_retention = Some(CHAT_RETENTION);
    })
    .await
}

/// A closed chat and an open one, each with three files (their images the
/// same bytes, stored once); two days later a pass deletes the closed one
/// with its rows and the bytes no other upload names.
async fn purge_leaves_only_the_open_chat(app: &TestApp) {
    let acme = app.company().await;
    let closed = chat_with_files(app, &acme, "Vic").await;
    let open = chat_with_files(app, &acme, "Val").await;
    close(app, &acme, &closed).await;
    assert_eq!((attachment_rows(app).await, objects(app).await), (6, 5));

    app.state.clock.advance(chrono::TimeDelta::days(2));
    retention_pass(app).await;
    app.get(&format!("/chat/sessions/{closed}"), &acme.key)
        .await
        .assert_error(404, "not_found");
    app.get(&format!("/chat/sessions/{open}"), &acme.key)
        .await
        .assert_status(200);
    assert_eq!((attachment_rows(app).await, objects(app).await), (3, 3));
}

async fn a_chat_past_its_retention_goes_with_its_files(backend: Backend) {
    let app = retained(backend).await;
    purge_leaves_only_the_open_chat(&app).await;
}

async fn a_chat_within_its_retention_keeps_its_files(backend: Backend) {
    let app = retained(backend).await;
    let acme = app.company().await;
    let closed = chat_with_files(&app, &acme, "Vic").await;
    close(&app, &acme, &closed).await;

    app.state.clock.advance(chrono::TimeDelta::hours(12));
    retention_pass(&app).await;
    app.get(&format!("/chat/sessions/{closed}"), &acme.key)
        .await
        .assert_status(200);
    assert_eq!((attachment_rows(&app).await, objects(&app).await), (3, 3));
}

#[tokio::test]
async fn s3_a_chat_past_its_retention_leaves_the_bucket() {
    let test = "attachments::chat_retention::s3_a_chat_past_its_retention_leaves_the_bucket";
    let Some((app, _)) = super::s3::s3_app_with(test, |config| {
        config.run_workers = false;
        config.chat_retention = Some(CHAT_RETENTION);
    })
    .await
    else {
        return;
    };
    purge_leaves_only_the_open_chat(&app).await;
}
