//! Downloads: with a key, through the signed link (expired or altered is
//! 403), the headers that keep a browser from running a file, and ranges.

use super::*;
use supportdesk::auth::{Mode, ScopeSet};

backend_tests!(
    a_key_downloads_the_bytes,
    a_signed_link_downloads_without_a_key,
    an_altered_link_is_403,
    an_expired_link_is_403,
    html_is_never_served_inline,
    images_are_served_inline,
    a_range_gives_206_with_those_bytes,
    downloads_need_the_read_scope,
    a_ticket_reader_downloads_a_tickets_file,
    a_chat_reader_downloads_a_messages_file,
    a_ticket_reader_cannot_download_a_messages_file,
);

async fn get_raw(
    app: &TestApp,
    url: &str,
    key: Option<&str>,
    range: Option<&str>,
) -> reqwest::Response {
    let mut request = app.client.get(url);
    if let Some(key) = key {
        request = request.header("X-API-Key", key);
    }
    if let Some(range) = range {
        request = request.header("Range", range);
    }
    request.send().await.expect("request sent")
}

/// The signed link of the first attachment of a new ticket.
async fn signed_link(app: &TestApp, acme: &TestCompany, file: &Value) -> String {
    let r = ticket_with(app, acme, json!([file["id"]])).await;
    r.assert_status(201)["attachments"][0]["url"]
        .as_str()
        .expect("url")
        .to_string()
}

async fn a_key_downloads_the_bytes(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let file = uploaded(&app, &acme, b"the bytes").await;
    let url = app.url(&format!("/api/v1/attachments/{}/content", id_of(&file)));
    let response = get_raw(&app, &url, Some(&acme.key), None).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.bytes().await.expect("body").as_ref(), b"the bytes");
}

async fn a_signed_link_downloads_without_a_key(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let file = uploaded(&app, &acme, b"linked bytes").await;
    let link = signed_link(&app, &acme, &file).await;
    let response = get_raw(&app, &link, None, None).await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.bytes().await.expect("body").as_ref(),
        b"linked bytes"
    );
}

async fn an_altered_link_is_403(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let file = uploaded(&app, &acme, b"guarded").await;
    let link = signed_link(&app, &acme, &file).await;
    let (base, sig) = link.split_once("&sig=").expect("sig");
    let flipped = if sig.starts_with('0') { "1" } else { "0" };
    let altered = format!("{base}&sig={flipped}{}", &sig[1..]);
    let r = TestResponse::from(app.client.get(&altered).send().await).await;
    r.assert_error(403, "invalid_link");
}

async fn an_expired_link_is_403(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let file = uploaded(&app, &acme, b"soon gone").await;
    let link = signed_link(&app, &acme, &file).await;
    // A node whose clock is 16 minutes ahead sees the link expired.
    let later = app
        .spawn_peer_with(|config| config.clock_offset = chrono::TimeDelta::minutes(16))
        .await;
    let path = link.split_once("/files/").expect("path").1;
    let r = TestResponse::from(
        later
            .client
            .get(later.url(&format!("/files/{path}")))
            .send()
            .await,
    )
    .await;
    r.assert_error(403, "invalid_link");
}

async fn html_is_never_served_inline(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = upload_raw(
        &app,
        &acme.key,
        "x.html",
        "text/html",
        b"<script>alert(1)</script>".to_vec(),
    )
    .await;
    let file = r.assert_status(201).clone();
    let link = signed_link(&app, &acme, &file).await;
    let response = get_raw(&app, &link, None, None).await;
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    assert!(header("content-disposition").starts_with("attachment;"));
    assert_eq!(header("x-content-type-options"), "nosniff");
    assert_eq!(header("content-security-policy"), "sandbox");
}

async fn images_are_served_inline(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = upload_raw(&app, &acme.key, "p.png", "image/png", PNG.to_vec()).await;
    let file = r.assert_status(201).clone();
    let url = app.url(&format!("/api/v1/attachments/{}/content", id_of(&file)));
    let response = get_raw(&app, &url, Some(&acme.key), None).await;
    let disposition = response
        .headers()
        .get("content-disposition")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert!(disposition.starts_with("inline;"), "{disposition}");
    assert_eq!(
        response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("image/png")
    );
}

async fn a_range_gives_206_with_those_bytes(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let bytes: Vec<u8> = (0..1000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let r = upload_raw(&app, &acme.key, "abc.txt", "text/plain", bytes.clone()).await;
    let file = r.assert_status(201).clone();
    let url = app.url(&format!("/api/v1/attachments/{}/content", id_of(&file)));
    let response = get_raw(&app, &url, Some(&acme.key), Some("bytes=0-99")).await;
    assert_eq!(response.status(), 206);
    assert_eq!(
        response
            .headers()
            .get("content-range")
            .and_then(|v| v.to_str().ok()),
        Some("bytes 0-99/1000")
    );
    assert_eq!(
        response.bytes().await.expect("body").as_ref(),
        &bytes[..100]
    );
}

async fn downloads_need_the_read_scope(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let file = uploaded(&app, &acme, b"scoped").await;
    let writer = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::parse_list("attachments:write").expect("scopes"),
        )
        .await;
    let r = app
        .get(&format!("/attachments/{}/content", id_of(&file)), &writer)
        .await;
    r.assert_error(403, "insufficient_scope");
}

async fn key_with(app: &TestApp, acme: &TestCompany, scopes: &str) -> String {
    app.key(
        acme.company.id,
        Mode::Test,
        ScopeSet::parse_list(scopes).expect("scopes"),
    )
    .await
}

/// An upload of `bytes` sent on a new chat session's message.
async fn on_a_message(app: &TestApp, acme: &TestCompany, bytes: &[u8]) -> Value {
    let session = crate::chat::new_session(app, acme, json!({"visitorName": "Vic"})).await;
    let file = uploaded(app, acme, bytes).await;
    app.post(
        &format!("/chat/sessions/{}/messages", id_of(&session)),
        &acme.key,
        json!({"body": "here", "senderType": "visitor", "attachmentIds": [file["id"]]}),
    )
    .await
    .assert_status(201);
    file
}

async fn a_ticket_reader_downloads_a_tickets_file(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let file = uploaded(&app, &acme, b"on a ticket").await;
    ticket_with(&app, &acme, json!([file["id"]]))
        .await
        .assert_status(201);
    let reader = key_with(&app, &acme, "tickets:read").await;
    let url = app.url(&format!("/api/v1/attachments/{}/content", id_of(&file)));
    let response = get_raw(&app, &url, Some(&reader), None).await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.bytes().await.expect("body").as_ref(),
        b"on a ticket"
    );
}

async fn a_chat_reader_downloads_a_messages_file(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let file = on_a_message(&app, &acme, b"in a chat").await;
    let reader = key_with(&app, &acme, "chat:read").await;
    let url = app.url(&format!("/api/v1/attachments/{}/content", id_of(&file)));
    let response = get_raw(&app, &url, Some(&reader), None).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.bytes().await.expect("body").as_ref(), b"in a chat");
}

async fn a_ticket_reader_cannot_download_a_messages_file(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let file = on_a_message(&app, &acme, b"chat only").await;
    let reader = key_with(&app, &acme, "tickets:read").await;
    app.get(&format!("/attachments/{}/content", id_of(&file)), &reader)
        .await
        .assert_error(403, "insufficient_scope");
}
