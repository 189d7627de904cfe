//! The providers' webhooks take a post as large as a message whose file is
//! at the attachments' limit can be (the file twice, base64-encoded: in
//! Postmark's `Attachments` and again in its `RawEmail`), and refuse one
//! far past it with 413 before reading it, the limit following
//! `SUPPORTDESK_MAX_ATTACHMENT_BYTES`.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use reqwest::Method;
use serde_json::{Value, json};

use super::{channel_with, ticket};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany, TestResponse, post_unfinished_body};

backend_tests!(
    a_post_carrying_a_file_at_the_limit_twice_is_taken,
    a_post_far_past_the_limit_is_refused_with_413,
);

/// The attachments' limit in these tests.
const LIMIT: usize = 2 * 1024 * 1024;

/// The base64 of `bytes` in MIME's 76-character lines.
fn mime_base64(bytes: &[u8]) -> String {
    STANDARD
        .encode(bytes)
        .as_bytes()
        .chunks(76)
        .map(|line| String::from_utf8_lossy(line).into_owned())
        .collect::<Vec<_>>()
        .join("\r\n")
}

/// Posts `body` to the company's Postmark channel: the response.
async fn post(app: &TestApp, acme: &TestCompany, body: Vec<u8>) -> TestResponse {
    let channel = channel_with(app, acme, json!({"kind": "postmark", "secret": "pm"})).await;
    let path = format!(
        "/inbound/email/{}/postmark",
        channel["id"].as_str().expect("id")
    );
    let request = app
        .api(Method::POST, &path, None)
        .basic_auth("postmark", Some("pm"))
        .header("Content-Type", "application/json")
        .body(body);
    TestResponse::from(request.send().await).await
}

async fn a_post_carrying_a_file_at_the_limit_twice_is_taken(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.max_attachment_bytes = LIMIT as u64).await;
    let acme = app.company().await;
    let file = vec![b'x'; LIMIT];
    let raw = format!(
        "From: ada@shop.example\r\nTo: support@acme.example\r\nSubject: Dump\r\n\
         Message-ID: <dump-1@shop.example>\r\nMIME-Version: 1.0\r\n\
         Content-Type: multipart/mixed; boundary=\"b\"\r\n\r\n--b\r\n\
         Content-Type: text/plain\r\n\r\nThe dump is attached.\r\n--b\r\n\
         Content-Type: application/octet-stream; name=\"dump.bin\"\r\n\
         Content-Disposition: attachment; filename=\"dump.bin\"\r\n\
         Content-Transfer-Encoding: base64\r\n\r\n{}\r\n--b--\r\n",
        mime_base64(&file)
    );
    let payload: Value = json!({
        "From": "ada@shop.example",
        "To": "support@acme.example",
        "Subject": "Dump",
        "MessageID": "dump-1",
        "TextBody": "The dump is attached.",
        "Headers": [{"Name": "Message-ID", "Value": "<dump-1@shop.example>"}],
        "Attachments": [{"Name": "dump.bin", "Content": STANDARD.encode(&file),
            "ContentType": "application/octet-stream", "ContentLength": LIMIT}],
        "RawEmail": raw,
    });

    let r = post(&app, &acme, serde_json::to_vec(&payload).expect("json")).await;

    let id = r.assert_status(200)["ticketId"]
        .as_str()
        .expect("ticket")
        .to_string();
    let ticket = ticket(&app, &acme, &id).await;
    let files: Vec<(Value, Value)> = ticket["attachments"]
        .as_array()
        .expect("attachments")
        .iter()
        .map(|a| (a["filename"].clone(), a["size"].clone()))
        .collect();
    assert_eq!(files, [(json!("dump.bin"), json!(LIMIT))], "{ticket}");
}

async fn a_post_far_past_the_limit_is_refused_with_413(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.max_attachment_bytes = LIMIT as u64).await;
    let acme = app.company().await;
    let channel = channel_with(&app, &acme, json!({"kind": "postmark", "secret": "pm"})).await;
    let path = format!(
        "/api/v1/inbound/email/{}/postmark",
        channel["id"].as_str().expect("id")
    );
    let declared = supportdesk::email::webhooks::body_max(LIMIT as u64) + 1;

    // Declared past the limit, a few KiB sent and the rest never: answered
    // at once, not after reading it.
    let r = post_unfinished_body(
        &app,
        &path,
        &[("Content-Type", "application/json")],
        declared,
        vec![vec![b' '; 64 * 1024]],
        Duration::ZERO,
    )
    .await;

    r.assert_error(413, "payload_too_large");
}
