//! The bounds of an upload's body that do not wait for its end: a form
//! that never shows its boundary, or whose part header never ends, is
//! refused with 413 after a few KiB, on the API and the widget alike; and
//! an upload with an `Idempotency-Key` may be as large as any upload.

use std::time::Duration;

use super::*;
use crate::chat::new_session;
use crate::support::post_unfinished_body;

backend_tests!(
    a_form_without_its_boundary_is_413_before_its_end,
    a_visitor_form_without_its_boundary_is_413_before_its_end,
    a_part_header_that_never_ends_is_413,
    a_keyed_upload_may_be_as_large_as_the_upload_limit,
    a_keyed_multipart_upload_past_one_mib_is_stored,
);

const FORM: &str = "multipart/form-data; boundary=XyZ";

/// `mib` MiB of bytes that hold no boundary, in 256 KiB chunks.
fn boundless(mib: usize) -> Vec<Vec<u8>> {
    (0..mib * 4).map(|_| vec![b'a'; 256 * 1024]).collect()
}

/// 30 MiB declared (more than the limit), 3 MiB sent, the rest never.
async fn a_form_without_its_boundary_is_413_before_its_end(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let headers = [("X-API-Key", acme.key.as_str()), ("Content-Type", FORM)];
    let r = post_unfinished_body(
        &app,
        "/api/v1/attachments",
        &headers,
        30 * 1024 * 1024,
        boundless(3),
        Duration::ZERO,
    )
    .await;
    r.assert_error(413, "payload_too_large");
    assert_eq!(attachment_rows(&app).await, 0);
}

async fn a_visitor_form_without_its_boundary_is_413_before_its_end(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({})).await;
    let bearer = format!(
        "Bearer {}",
        session["visitorToken"].as_str().expect("token")
    );
    let headers = [("Authorization", bearer.as_str()), ("Content-Type", FORM)];
    let r = post_unfinished_body(
        &app,
        "/widget/v1/attachments",
        &headers,
        200 * 1024 * 1024,
        boundless(3),
        Duration::ZERO,
    )
    .await;
    r.assert_error(413, "payload_too_large");
    assert_eq!(attachment_rows(&app).await, 0);
}

async fn a_part_header_that_never_ends_is_413(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let mut start =
        b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nX-Pad: "
            .to_vec();
    start.extend(vec![b'a'; 256 * 1024]);
    let mut sent = vec![start];
    sent.extend(boundless(2));
    let headers = [("X-API-Key", acme.key.as_str()), ("Content-Type", FORM)];
    let r = post_unfinished_body(
        &app,
        "/api/v1/attachments",
        &headers,
        20 * 1024 * 1024,
        sent,
        Duration::ZERO,
    )
    .await;
    r.assert_error(413, "payload_too_large");
    let message = r.body["error"].as_str().expect("message");
    assert!(message.contains("headers"), "{message}");
    assert_eq!(attachment_rows(&app).await, 0);
}

/// Keyed uploads were held to the 1 MiB of other request bodies.
async fn a_keyed_upload_may_be_as_large_as_the_upload_limit(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let bytes = vec![b'x'; 5 * 1024 * 1024];
    let send = async || {
        TestResponse::from(
            app.api(
                Method::POST,
                "/attachments?filename=big.txt",
                Some(&acme.key),
            )
            .header("Content-Type", "text/plain")
            .header("Idempotency-Key", "upload-1")
            .body(bytes.clone())
            .send()
            .await,
        )
        .await
    };
    let first = send().await;
    let stored = first.assert_status(201).clone();
    assert_eq!(stored["size"], bytes.len());
    let again = send().await;
    assert_eq!(again.assert_status(201), &stored);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(attachment_rows(&app).await, 1);
}

async fn a_keyed_multipart_upload_past_one_mib_is_stored(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let bytes = vec![b'y'; 3 * 1024 * 1024];
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(bytes.clone())
            .file_name("big.txt")
            .mime_str("text/plain")
            .expect("mime"),
    );
    let r = TestResponse::from(
        app.api(Method::POST, "/attachments", Some(&acme.key))
            .header("Idempotency-Key", "form-1")
            .multipart(form)
            .send()
            .await,
    )
    .await;
    assert_eq!(r.assert_status(201)["size"], bytes.len());
    assert_eq!(attachment_rows(&app).await, 1);
}
