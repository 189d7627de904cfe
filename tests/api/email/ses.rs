//! Amazon SES through SNS: a notification signed with the certificate at
//! an SNS address opens a ticket; a forged signature is 401; a
//! subscription's confirmation asking for a GET of an address that is not
//! SNS's is refused without fetching it. The test
//! makes its own key and certificate and puts the certificate where the
//! service keeps fetched ones.

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::rsa::{KeyPair, KeySize};
use aws_lc_rs::signature::{KeyPair as _, RSA_PKCS1_SHA256};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use reqwest::Method;
use serde_json::json;
use supportdesk::email::sns::{SnsMessage, string_to_sign};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::channel_with;
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestResponse};

backend_tests!(
    ses_notification_signed_by_sns_opens_a_ticket,
    ses_forged_signature_is_refused,
    ses_subscription_confirmation_off_amazon_is_refused_unfetched,
);

const CERT_URL: &str = "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-test.pem";
const TOPIC: &str = "arn:aws:sns:us-east-1:123456789012:ses-inbound";

/// One DER element.
fn der(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = content.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes: Vec<u8> = len
            .to_be_bytes()
            .into_iter()
            .skip_while(|b| *b == 0)
            .collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend(bytes);
    }
    out.extend_from_slice(content);
    out
}

/// A certificate (in PEM) whose subject public key is `key`'s.
fn certificate(key: &KeyPair) -> String {
    let rsa_encryption = der(
        0x06,
        &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01],
    );
    let algorithm = der(0x30, &[rsa_encryption, der(0x05, &[])].concat());
    let mut bits = vec![0u8];
    bits.extend_from_slice(key.public_key().as_ref());
    let spki = der(0x30, &[algorithm.clone(), der(0x03, &bits)].concat());
    let name = der(0x30, &[]);
    let tbs = der(
        0x30,
        &[
            der(0xa0, &der(0x02, &[2])),
            der(0x02, &[1]),
            algorithm.clone(),
            name.clone(),
            der(0x30, &[]),
            name,
            spki,
        ]
        .concat(),
    );
    let cert = der(0x30, &[tbs, algorithm, der(0x03, &[0])].concat());
    format!(
        "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
        STANDARD.encode(cert)
    )
}

const RAW: &str = "From: Ada <ada@shop.example>\r\nTo: support@acme.example\r\n\
Subject: Through SES\r\nMessage-ID: <ses-1@shop.example>\r\n\
Content-Type: text/plain; charset=utf-8\r\n\r\nHello through SES\r\n";

/// An SNS notification of SES mail, signed by `key` (SignatureVersion 2).
fn notification(key: &KeyPair, forged: bool) -> String {
    let message = json!({
        "notificationType": "Received",
        "mail": {"source": "ada@shop.example", "messageId": "o3vrnil0e2ic28trm7dfhrc2v0clambfeho4d8g",
            "destination": ["support@acme.example"]},
        "receipt": {"action": {"type": "SNS", "topicArn": TOPIC, "encoding": "UTF8"},
            "spamVerdict": {"status": "PASS"}, "virusVerdict": {"status": "PASS"}},
        "content": RAW,
    })
    .to_string();
    signed(
        key,
        SnsMessage {
            kind: "Notification".into(),
            message_id: "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324".into(),
            token: None,
            topic_arn: TOPIC.into(),
            subject: Some("Amazon SES Email Receipt Notification".into()),
            message,
            timestamp: "2026-11-29T22:00:00.000Z".into(),
            signature_version: "2".into(),
            signature: String::new(),
            signing_cert_url: CERT_URL.into(),
            subscribe_url: None,
        },
        forged,
    )
}

/// SNS's first post to a new HTTPS subscription, asking for a GET of
/// `subscribe_url`, signed by `key`.
fn subscription_confirmation(key: &KeyPair, subscribe_url: &str) -> String {
    signed(
        key,
        SnsMessage {
            kind: "SubscriptionConfirmation".into(),
            message_id: "165545c9-2a5c-472c-8df2-7ff2be2b3b1b".into(),
            token: Some("2336412f37fb687f5d51e6e241d09c805a5a57b30d712f794cc5f6a988666d92768dd60a747ba6f3beb71854e285d6ad02428b09ceece29417f1f02d609c582afbacc99c583a916b9981dd2728f4ae6fdb82efd087cc3b7849e05798d2d2785c03b0879594eeac82c01f235d0e717736".into()),
            topic_arn: TOPIC.into(),
            subject: None,
            message: format!("You have chosen to subscribe to the topic {TOPIC}.\nTo confirm the subscription, visit the SubscribeURL included in this message."),
            timestamp: "2026-11-29T22:00:00.000Z".into(),
            signature_version: "2".into(),
            signature: String::new(),
            signing_cert_url: CERT_URL.into(),
            subscribe_url: Some(subscribe_url.into()),
        },
        false,
    )
}

/// `sns` signed by `key` (spoilt when `forged`), as SNS posts it.
fn signed(key: &KeyPair, mut sns: SnsMessage, forged: bool) -> String {
    let mut signed = string_to_sign(&sns);
    if forged {
        signed.push('x');
    }
    let mut signature = vec![0u8; key.public_modulus_len()];
    key.sign(
        &RSA_PKCS1_SHA256,
        &SystemRandom::new(),
        signed.as_bytes(),
        &mut signature,
    )
    .expect("signed");
    sns.signature = STANDARD.encode(signature);
    let mut posted = json!({
        "Type": sns.kind, "MessageId": sns.message_id, "TopicArn": sns.topic_arn,
        "Message": sns.message, "Timestamp": sns.timestamp,
        "SignatureVersion": sns.signature_version, "Signature": sns.signature,
        "SigningCertURL": sns.signing_cert_url,
    });
    if let Some(subject) = sns.subject {
        posted["Subject"] = json!(subject);
        posted["UnsubscribeURL"] = json!("https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe");
    }
    if let Some(token) = sns.token {
        posted["Token"] = json!(token);
    }
    if let Some(url) = sns.subscribe_url {
        posted["SubscribeURL"] = json!(url);
    }
    posted.to_string()
}

/// Posts to a new SES channel of a new company what `body` makes with a
/// key whose certificate the service knows as SNS's.
async fn post_signed(
    app: &TestApp,
    kind: &str,
    body: impl FnOnce(&KeyPair) -> String,
) -> (TestResponse, String) {
    let acme = app.company().await;
    let key = KeyPair::generate(KeySize::Rsa2048).expect("key");
    app.state
        .sns_certificates
        .insert(CERT_URL, &certificate(&key));
    let channel = channel_with(app, &acme, json!({"kind": "ses", "topicArn": TOPIC})).await;
    let path = format!("/inbound/email/{}/ses", channel["id"].as_str().expect("id"));
    let request = app
        .api(Method::POST, &path, None)
        .header("Content-Type", "text/plain; charset=UTF-8")
        .header("x-amz-sns-message-type", kind)
        .body(body(&key));
    (TestResponse::from(request.send().await).await, acme.key)
}

async fn post(app: &TestApp, forged: bool) -> (TestResponse, String) {
    post_signed(app, "Notification", |key| notification(key, forged)).await
}

async fn ses_notification_signed_by_sns_opens_a_ticket(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (r, key) = post(&app, false).await;
    let id = r.assert_status(200)["ticketId"]
        .as_str()
        .expect("ticket")
        .to_string();
    let ticket = app.get(&format!("/tickets/{id}"), &key).await;
    assert_eq!(ticket.assert_status(200)["subject"], "Through SES");
}

async fn ses_forged_signature_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (r, key) = post(&app, true).await;
    r.assert_error(401, "invalid_token");
    let total = app.get("/tickets", &key).await.assert_status(200)["total"].clone();
    assert_eq!(total, 0);
}

async fn ses_subscription_confirmation_off_amazon_is_refused_unfetched(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let elsewhere = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200))
        .mount(&elsewhere)
        .await;
    let subscribe_url = format!(
        "{}/?Action=ConfirmSubscription&TopicArn={TOPIC}&Token=2336412f",
        elsewhere.uri()
    );

    let (r, _) = post_signed(&app, "SubscriptionConfirmation", |key| {
        subscription_confirmation(key, &subscribe_url)
    })
    .await;

    r.assert_error(400, "bad_request");
    let fetched = elsewhere.received_requests().await.expect("recorded");
    assert_eq!(fetched.len(), 0, "{fetched:?}");
}
