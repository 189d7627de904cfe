//! No entry holds a secret: the bytes of a minted key, a webhook's signing
//! secrets (made and rotated), an email channel's inbound secret, a
//! password, and a signed-in session's token and CSRF token appear in no
//! entry's JSON.

use serde_json::json;

use super::all_entries_text;
use crate::accounts::{PASSWORD, agent_with_password, sign_in};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(no_secret_appears_in_any_entry);

async fn no_secret_appears_in_any_entry(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let minted = app
        .post(
            "/api-keys",
            &acme.key,
            json!({"name": "K", "scopes": ["tickets:read"]}),
        )
        .await
        .assert_status(201)["key"]
        .as_str()
        .expect("key")
        .to_owned();
    let body = json!({"name": "H", "url": "http://127.0.0.1:9/hook", "events": ["ticket.created"]});
    let hook = app
        .post("/company/webhooks", &acme.key, body)
        .await
        .assert_status(201)
        .clone();
    let first_secret = hook["secret"].as_str().expect("secret").to_owned();
    let id = hook["id"].as_str().expect("id");
    let rotated = app
        .post(
            &format!("/company/webhooks/{id}/rotate-secret"),
            &acme.key,
            json!({}),
        )
        .await
        .assert_status(200)["secret"]
        .as_str()
        .expect("secret")
        .to_owned();
    let channel = json!({"address": "support@acme.example", "entityId": acme.entity.id,
        "inbound": {"kind": "postmark", "secret": "inbound-s3cret-0042"}});
    app.post("/channels/email", &acme.key, channel)
        .await
        .assert_status(201);
    agent_with_password(&app, &acme, "ada@acme.test", "admin").await;
    let session = sign_in(&app, "ada@acme.test", "live").await;
    let token = session
        .cookie
        .split_once('=')
        .expect("name=token")
        .1
        .to_owned();

    let text = all_entries_text(&app, &acme).await;

    // Every kind of change above wrote its entry…
    for action in [
        "api_key.created",
        "webhook.created",
        "webhook.secret_rotated",
        "email_channel.created",
        "auth.signed_in",
    ] {
        assert!(text.contains(action), "{action} in {text}");
    }
    // …and none holds a secret's bytes.
    for secret in [
        &minted,
        &first_secret,
        &rotated,
        &acme.key,
        &"inbound-s3cret-0042".to_string(),
        &PASSWORD.to_string(),
        &token,
        &session.csrf,
    ] {
        assert!(!text.contains(secret.as_str()), "a secret in {text}");
    }
}
