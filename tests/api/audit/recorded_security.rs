//! Security changes outside the admin routes: a password changed or reset
//! (by the agent themselves), a sign-in failure that starts a lock-out,
//! and a chat deleted by the retention pass each write one entry.

use reqwest::Method;
use serde_json::json;

use super::only_entry;
use crate::accounts::{PASSWORD, agent_with_password, last_link_token, login_with, sign_in};
use crate::backend_tests;
use crate::chat::new_session;
use crate::support::{Backend, TestApp, retention_pass};

backend_tests!(
    a_changed_password_is_recorded_by_the_agent,
    a_reset_password_is_recorded_by_the_agent,
    a_sign_in_failure_that_locks_the_account_out_is_recorded,
    a_chat_deleted_by_retention_is_recorded,
);

const NEW_PASSWORD: &str = "a brand new passphrase";

async fn a_changed_password_is_recorded_by_the_agent(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let user = agent_with_password(&app, &acme, "ada@acme.test", "agent").await;
    let ada = sign_in(&app, "ada@acme.test", "live").await;

    let body = json!({"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD});
    ada.send(
        &app,
        Method::POST,
        "/api/v1/auth/password",
        Some(body),
        true,
    )
    .await
    .assert_status(204);

    let entry = only_entry(&app, &acme, "user.password_changed").await;
    assert_eq!(
        (&entry["actor"]["id"], &entry["target"], &entry["changes"]),
        (
            &json!(user),
            &json!({"type": "user", "id": user}),
            &json!({"secret": "changed"})
        ),
        "{entry}"
    );
}

async fn a_reset_password_is_recorded_by_the_agent(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let user = agent_with_password(&app, &acme, "ada@acme.test", "agent").await;
    let post = |path: &'static str, body: serde_json::Value| {
        app.client.post(app.url(path)).json(&body).send()
    };
    post(
        "/api/v1/auth/password-reset",
        json!({"email": "ada@acme.test"}),
    )
    .await
    .expect("sent");
    let token = last_link_token(&app, "ada@acme.test").await;

    let confirmed = post(
        "/api/v1/auth/password-reset/confirm",
        json!({"token": token, "password": NEW_PASSWORD}),
    )
    .await
    .expect("sent");
    assert_eq!(confirmed.status().as_u16(), 204);

    let entry = only_entry(&app, &acme, "user.password_reset").await;
    assert_eq!(
        (&entry["actor"]["id"], &entry["target"], &entry["changes"]),
        (
            &json!(user),
            &json!({"type": "user", "id": user}),
            &json!({"secret": "changed"})
        ),
        "{entry}"
    );
}

async fn a_sign_in_failure_that_locks_the_account_out_is_recorded(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let user = agent_with_password(&app, &acme, "ada@acme.test", "agent").await;
    let wrong = json!({"email": "ada@acme.test", "password": format!("{PASSWORD}!")});
    // The account's free failures, then the one that locks it, then one
    // refused while locked (which writes nothing).
    for _ in 0..7 {
        login_with(&app, wrong.clone(), None).await;
    }

    let entry = only_entry(&app, &acme, "auth.sign_in_limited").await;
    assert_eq!(entry["target"], json!({"type": "user", "id": user}));
    assert!(
        entry["changes"]["after"]["lockedForSeconds"]
            .as_u64()
            .is_some_and(|secs| secs > 0),
        "{entry}"
    );
}

async fn a_chat_deleted_by_retention_is_recorded(backend: Backend) {
    let day = std::time::Duration::from_secs(24 * 3600);
    let app = TestApp::spawn_with(backend, |config| {
        config.run_workers = false;
        config.chat_retention = Some(day);
    })
    .await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({"visitorName": "Vi"})).await;
    let id = session["id"].as_str().expect("id");
    app.patch(
        &format!("/chat/sessions/{id}"),
        &acme.key,
        json!({"status": "CLOSED"}),
    )
    .await
    .assert_status(200);
    app.state.clock.advance(chrono::TimeDelta::days(2));

    retention_pass(&app).await;

    let entry = only_entry(&app, &acme, "chat.deleted").await;
    assert_eq!(
        (&entry["actor"]["type"], &entry["target"]),
        (&json!("system"), &json!({"type": "chat_session", "id": id})),
        "{entry}"
    );
}
