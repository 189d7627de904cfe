//! Agent accounts: a second factor turned on and off, a session ended and
//! an invitation sent each write one entry naming who did it, never the
//! secret (the TOTP seed, the invitation link).

use reqwest::Method;
use serde_json::json;

use super::{all_entries_text, key_id, only_entry};
use crate::accounts::totp::{code, turn_on};
use crate::accounts::{agent_with_password, last_link_token, sign_in};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    turning_totp_on_and_off_is_recorded_without_the_seed,
    signing_out_is_recorded_as_a_session_ended,
    an_invitation_is_recorded_without_its_link,
);

async fn turning_totp_on_and_off_is_recorded_without_the_seed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ada = agent_with_password(&app, &acme, "ada@acme.test", "agent").await;
    let mut browser = sign_in(&app, "ada@acme.test", "live").await;
    let (secret, recovery) = turn_on(&app, &mut browser).await;
    browser
        .send(
            &app,
            Method::DELETE,
            "/api/v1/auth/totp",
            Some(json!({"code": code(&app, &secret)})),
            true,
        )
        .await
        .assert_status(204);

    let agent = json!({"type": "agent", "id": ada, "name": "Agent ada@acme.test"});
    let target = json!({"type": "user", "id": ada});
    let on = only_entry(&app, &acme, "totp.enabled").await;
    assert_eq!((&on["actor"], &on["target"]), (&agent, &target));
    assert_eq!(on["changes"], json!({"secret": "created"}));
    let off = only_entry(&app, &acme, "totp.disabled").await;
    assert_eq!((&off["actor"], &off["target"]), (&agent, &target));
    assert_eq!(off["changes"], json!({"secret": "removed"}));
    let text = all_entries_text(&app, &acme).await;
    for secret in std::iter::once(&secret).chain(&recovery) {
        assert!(!text.contains(secret.as_str()), "a secret in {text}");
    }
}

async fn signing_out_is_recorded_as_a_session_ended(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ada = agent_with_password(&app, &acme, "ada@acme.test", "agent").await;
    let browser = sign_in(&app, "ada@acme.test", "live").await;

    browser
        .send(&app, Method::POST, "/api/v1/auth/logout", None, true)
        .await
        .assert_status(204);

    let entry = only_entry(&app, &acme, "session.ended").await;
    assert_eq!(entry["actor"]["type"], "agent");
    assert_eq!(entry["actor"]["id"], ada.to_string());
    assert_eq!(
        entry["target"],
        json!({"type": "session", "id": browser.me["sessionId"]})
    );
}

async fn an_invitation_is_recorded_without_its_link(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let actor = key_id(&app, &acme).await;
    let user = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Bea", "email": "bea@acme.test", "invite": true}),
        )
        .await
        .assert_status(201)
        .clone();

    let entry = only_entry(&app, &acme, "user.invited").await;
    super::assert_by_key_on(&entry, &actor, "user", user["id"].as_str().expect("id"));
    assert_eq!(entry["changes"]["after"]["email"], "bea@acme.test");
    let token = last_link_token(&app, "bea@acme.test").await;
    assert!(!all_entries_text(&app, &acme).await.contains(&token));
}
