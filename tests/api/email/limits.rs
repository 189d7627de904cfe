//! An incoming message's files obey the attachments' size limit: a file
//! or inline image past it is not kept, the rest of the message still
//! makes its ticket, and the comment names what was left out.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use reqwest::Method;
use serde_json::{Value, json};

use super::{channel_with, deliver, imap_channel, opened, ticket};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_webhook_attachment_past_the_limit_is_named_and_the_rest_kept,
    an_inline_image_past_the_limit_is_named_and_the_rest_kept,
);

/// The attachments' limit in these tests: a small file fits, a large
/// one does not.
const LIMIT: u64 = 100;

fn filenames(ticket: &Value) -> Vec<String> {
    let mut names: Vec<String> = ticket["attachments"]
        .as_array()
        .expect("attachments")
        .iter()
        .map(|a| a["filename"].as_str().expect("filename").to_string())
        .collect();
    names.sort();
    names
}

async fn a_webhook_attachment_past_the_limit_is_named_and_the_rest_kept(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.max_attachment_bytes = LIMIT).await;
    let acme = app.company().await;
    let channel = channel_with(&app, &acme, json!({"kind": "postmark", "secret": "pm"})).await;
    let payload = json!({
        "From": "ada@shop.example",
        "FromFull": {"Email": "ada@shop.example", "Name": "Ada"},
        "To": "support@acme.example",
        "ToFull": [{"Email": "support@acme.example", "Name": ""}],
        "Cc": "",
        "CcFull": [],
        "Subject": "Logs attached",
        "MessageID": "limits-1",
        "TextBody": "Here are the logs.",
        "Headers": [{"Name": "Message-ID", "Value": "<limits-1@shop.example>"}],
        "Attachments": [
            {"Name": "note.txt", "Content": STANDARD.encode(b"short note"), "ContentType": "text/plain", "ContentLength": 10},
            {"Name": "huge.log", "Content": STANDARD.encode(vec![b'x'; 4096]), "ContentType": "text/plain", "ContentLength": 4096}
        ]
    });
    let path = format!(
        "/inbound/email/{}/postmark",
        channel["id"].as_str().expect("id")
    );
    let request = app
        .api(Method::POST, &path, None)
        .basic_auth("postmark", Some("pm"))
        .json(&payload);
    let r = crate::support::TestResponse::from(request.send().await).await;
    let id = r.assert_status(200)["ticketId"]
        .as_str()
        .expect("ticket")
        .to_string();
    let ticket = ticket(&app, &acme, &id).await;
    let description = ticket["description"].as_str().expect("description");
    assert_eq!(
        (
            filenames(&ticket),
            description.contains("Here are the logs."),
            description.contains("[huge.log was too large to keep]"),
        ),
        (vec!["note.txt".to_string()], true, true),
        "{ticket}"
    );
}

async fn an_inline_image_past_the_limit_is_named_and_the_rest_kept(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.max_attachment_bytes = LIMIT).await;
    let acme = app.company().await;
    let channel = imap_channel(&app, &acme).await;
    // Base64 in lines of 76, as mail carries it.
    let picture = STANDARD.encode(vec![7u8; 4096]);
    let picture: Vec<&str> = picture
        .as_bytes()
        .chunks(76)
        .map(|line| std::str::from_utf8(line).expect("base64 is ASCII"))
        .collect();
    let picture = picture.join("\r\n");
    let raw = format!(
        "From: Ada <ada@shop.example>\r\nTo: support@acme.example\r\n\
Subject: Screenshot\r\nMessage-ID: <limits-2@shop.example>\r\nMIME-Version: 1.0\r\n\
Content-Type: multipart/mixed; boundary=\"outer\"\r\n\r\n\
--outer\r\nContent-Type: multipart/related; boundary=\"inner\"\r\n\r\n\
--inner\r\nContent-Type: text/html; charset=utf-8\r\n\r\n\
<p>See the screen<img src=\"cid:shot\"></p>\r\n\
--inner\r\nContent-Type: image/png; name=\"shot.png\"\r\nContent-ID: <shot>\r\n\
Content-Disposition: inline; filename=\"shot.png\"\r\nContent-Transfer-Encoding: base64\r\n\r\n\
{picture}\r\n\
--inner--\r\n\
--outer\r\nContent-Type: text/plain; name=\"note.txt\"\r\n\
Content-Disposition: attachment; filename=\"note.txt\"\r\n\r\n\
short note\r\n\
--outer--\r\n"
    );
    let id = opened(&deliver(&app, &acme, &channel, &raw).await);
    let ticket = ticket(&app, &acme, &id).await;
    let description = ticket["description"].as_str().expect("description");
    assert_eq!(
        (
            filenames(&ticket),
            description.contains("See the screen"),
            description.contains("[shot.png was too large to keep]"),
        ),
        (vec!["note.txt".to_string()], true, true),
        "{ticket}"
    );
}
