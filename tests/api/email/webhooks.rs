//! The providers' inbound webhooks: each accepts its documented sample
//! payload and refuses a wrong signature or secret (401), changing
//! nothing.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit, Mac};
use reqwest::Method;
use serde_json::{Value, json};

use super::channel_with;
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany, TestResponse};

backend_tests!(
    postmark_sample_opens_a_ticket,
    postmark_wrong_secret_is_refused,
    mailgun_sample_opens_a_ticket,
    mailgun_wrong_signature_is_refused,
    sendgrid_sample_opens_a_ticket,
    sendgrid_wrong_secret_is_refused,
);

/// Postmark's inbound sample, shortened (its documented field names).
fn postmark_sample() -> Value {
    json!({
        "FromName": "Postmarkapp Support",
        "MessageStream": "inbound",
        "From": "support@postmarkapp.com",
        "FromFull": {"Email": "support@postmarkapp.com", "Name": "Postmarkapp Support", "MailboxHash": ""},
        "To": "\"Firstname Lastname\" <support@acme.example>",
        "ToFull": [{"Email": "support@acme.example", "Name": "Firstname Lastname", "MailboxHash": ""}],
        "Cc": "",
        "CcFull": [],
        "OriginalRecipient": "support@acme.example",
        "Subject": "Test subject",
        "MessageID": "73e6d360-66eb-11e1-8e72-a8904824019b",
        "ReplyTo": "replyto@postmarkapp.com",
        "MailboxHash": "",
        "Date": "Fri, 1 Aug 2014 16:45:32 -04:00",
        "TextBody": "This is a test text body.",
        "HtmlBody": "<html><body><p>This is a test html body.</p></body></html>",
        "StrippedTextReply": "This is the reply text",
        "Tag": "TestTag",
        "Headers": [
            {"Name": "X-Header-Test", "Value": ""},
            {"Name": "X-Spam-Status", "Value": "No"},
            {"Name": "Message-ID", "Value": "<CAGXpo2WKfxHWZ5UFYCR3H_J9SNMG+5AXUovfEFL6DjWBJSyZaA@mail.gmail.com>"}
        ],
        "Attachments": [{
            "Name": "test.txt",
            "Content": "VGhpcyBpcyBhdHRhY2htZW50IGNvbnRlbnRzLCBiYXNlLTY0IGVuY29kZWQu",
            "ContentType": "text/plain",
            "ContentLength": 45
        }]
    })
}

fn inbound_path(channel: &Value, provider: &str) -> String {
    format!(
        "/inbound/email/{}/{provider}",
        channel["id"].as_str().expect("id")
    )
}

async fn send(app: &TestApp, request: reqwest::RequestBuilder) -> TestResponse {
    let _ = app;
    TestResponse::from(request.send().await).await
}

async fn ticket_total(app: &TestApp, acme: &TestCompany) -> i64 {
    app.get("/tickets", &acme.key).await.assert_status(200)["total"]
        .as_i64()
        .expect("total")
}

async fn postmark(app: &TestApp, acme: &TestCompany, secret: &str) -> TestResponse {
    let channel = channel_with(
        app,
        acme,
        json!({"kind": "postmark", "secret": "pm-secret"}),
    )
    .await;
    let request = app
        .api(Method::POST, &inbound_path(&channel, "postmark"), None)
        .basic_auth("postmark", Some(secret))
        .json(&postmark_sample());
    send(app, request).await
}

async fn postmark_sample_opens_a_ticket(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = postmark(&app, &acme, "pm-secret").await;
    let id = r.assert_status(200)["ticketId"]
        .as_str()
        .expect("ticket")
        .to_string();
    let ticket = app.get(&format!("/tickets/{id}"), &acme.key).await;
    let ticket = ticket.assert_status(200);
    assert_eq!(
        (&ticket["subject"], &ticket["attachments"][0]["filename"]),
        (&json!("Test subject"), &json!("test.txt"))
    );
}

async fn postmark_wrong_secret_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = postmark(&app, &acme, "guessed").await;
    r.assert_error(401, "invalid_token");
    assert_eq!(ticket_total(&app, &acme).await, 0);
}

/// Mailgun's routed-message form, signed with `key` (its documented
/// fields: timestamp, token, signature, then the parsed message).
fn mailgun_form(app: &TestApp, key: &str) -> String {
    let timestamp = app.state.clock.now().0.timestamp().to_string();
    let token = "c6e9d1d6a6b5e86d5e0a4b1bcd3e4a2f7b2c1d0e9f8a7b6c5d";
    let mut mac = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(b"key-signing-1").expect("key");
    mac.update(timestamp.as_bytes());
    mac.update(token.as_bytes());
    let signature = match key {
        "key-signing-1" => hex::encode(mac.finalize().into_bytes()),
        _ => "0".repeat(64),
    };
    form_urlencoded::Serializer::new(String::new())
        .append_pair("recipient", "support@acme.example")
        .append_pair("sender", "bob@example.com")
        .append_pair("from", "Bob <bob@example.com>")
        .append_pair("subject", "Re: Sample POST request")
        .append_pair("body-plain", "Hi Alice, This is Bob.")
        .append_pair("stripped-text", "Hi Alice, This is Bob.")
        .append_pair("Message-Id", "<517ACC75.5010709@example.com>")
        .append_pair(
            "message-headers",
            r#"[["Received","by mx.example.com"],["Message-Id","<517ACC75.5010709@example.com>"],["Subject","Re: Sample POST request"]]"#,
        )
        .append_pair("timestamp", &timestamp)
        .append_pair("token", token)
        .append_pair("signature", &signature)
        .finish()
}

async fn mailgun(app: &TestApp, acme: &TestCompany, key: &str) -> TestResponse {
    let channel = channel_with(
        app,
        acme,
        json!({"kind": "mailgun", "signingKey": "key-signing-1"}),
    )
    .await;
    let request = app
        .api(Method::POST, &inbound_path(&channel, "mailgun"), None)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(mailgun_form(app, key));
    send(app, request).await
}

async fn mailgun_sample_opens_a_ticket(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = mailgun(&app, &acme, "key-signing-1").await;
    assert_eq!(r.assert_status(200)["outcome"], "opened");
}

async fn mailgun_wrong_signature_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = mailgun(&app, &acme, "forged").await;
    r.assert_error(401, "invalid_token");
    assert_eq!(ticket_total(&app, &acme).await, 0);
}

/// SendGrid's Inbound Parse form (its documented fields), as multipart.
fn sendgrid_form(boundary: &str) -> String {
    let fields = [
        (
            "headers",
            "Received: by mx0047p1mdw1.sendgrid.net\nMessage-ID: <sg-sample-1@example.com>\nFrom: Example User <test@example.com>\nTo: support@acme.example\nSubject: Test Subject",
        ),
        ("dkim", "{@example.com : pass}"),
        ("to", "support@acme.example"),
        ("from", "Example User <test@example.com>"),
        ("subject", "Test Subject"),
        ("text", "Hello from SendGrid"),
        ("html", "<p>Hello from <b>SendGrid</b></p>"),
        ("sender_ip", "192.0.2.1"),
        (
            "envelope",
            r#"{"to":["support@acme.example"],"from":"test@example.com"}"#,
        ),
        ("attachments", "1"),
        (
            "charsets",
            r#"{"to":"UTF-8","subject":"UTF-8","from":"UTF-8","text":"UTF-8"}"#,
        ),
        ("SPF", "pass"),
    ];
    let mut body = String::new();
    for (name, value) in fields {
        body.push_str(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
        ));
    }
    body.push_str(&format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"attachment1\"; filename=\"notes.txt\"\r\n\
         Content-Type: text/plain\r\n\r\n{}\r\n--{boundary}--\r\n",
        String::from_utf8(STANDARD.decode("bm90ZXM=").expect("b64")).expect("utf8")
    ));
    body
}

async fn sendgrid(app: &TestApp, acme: &TestCompany, secret: &str) -> TestResponse {
    let channel = channel_with(
        app,
        acme,
        json!({"kind": "sendgrid", "secret": "sg-secret"}),
    )
    .await;
    let path = format!("{}?secret={secret}", inbound_path(&channel, "sendgrid"));
    let request = app
        .api(Method::POST, &path, None)
        .header("Content-Type", "multipart/form-data; boundary=xYzZY")
        .body(sendgrid_form("xYzZY"));
    send(app, request).await
}

async fn sendgrid_sample_opens_a_ticket(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = sendgrid(&app, &acme, "sg-secret").await;
    let id = r.assert_status(200)["ticketId"]
        .as_str()
        .expect("ticket")
        .to_string();
    let ticket = app.get(&format!("/tickets/{id}"), &acme.key).await;
    let ticket = ticket.assert_status(200);
    assert_eq!(
        (&ticket["subject"], &ticket["attachments"][0]["filename"]),
        (&json!("Test Subject"), &json!("notes.txt"))
    );
}

async fn sendgrid_wrong_secret_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = sendgrid(&app, &acme, "wrong").await;
    r.assert_error(401, "invalid_token");
    assert_eq!(ticket_total(&app, &acme).await, 0);
}
