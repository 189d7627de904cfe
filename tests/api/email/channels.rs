//! `/channels/email`: secrets are written and never read back; an address
//! is one channel's; changes keep the secret they do not name.

use serde_json::json;

use super::{DESK, channel_with};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_channel_shows_that_its_secret_is_set_never_the_secret,
    an_address_is_one_channels,
    a_change_without_the_secret_keeps_it,
);

async fn a_channel_shows_that_its_secret_is_set_never_the_secret(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let made = channel_with(
        &app,
        &acme,
        json!({"kind": "mailgun", "signingKey": "key-123456"}),
    )
    .await;
    let id = made["id"].as_str().expect("id");
    let read = app.get(&format!("/channels/email/{id}"), &acme.key).await;
    let text = read.text.clone();
    assert_eq!(
        (
            read.assert_status(200)["inbound"]["secretSet"].clone(),
            text.contains("key-123456")
        ),
        (json!(true), false),
        "{text}"
    );
}

async fn an_address_is_one_channels(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    channel_with(&app, &acme, json!({"kind": "ses"})).await;
    let again = app
        .post(
            "/channels/email",
            &acme.key,
            json!({"address": DESK.to_uppercase(), "entityId": acme.entity.id,
                "inbound": {"kind": "ses"}}),
        )
        .await;
    assert_eq!(again.status, 409, "{}", again.text);
}

async fn a_change_without_the_secret_keeps_it(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let made = channel_with(&app, &acme, json!({"kind": "postmark", "secret": "s3cret"})).await;
    let id = made["id"].as_str().expect("id");
    let path = format!("/channels/email/{id}");
    let changed = app
        .patch(
            &path,
            &acme.key,
            json!({"name": "Billing", "inbound": {"kind": "postmark"}}),
        )
        .await;
    let body = changed.assert_status(200);
    assert_eq!(
        (&body["name"], &body["inbound"]["secretSet"]),
        (&json!("Billing"), &json!(true))
    );
}
