//! What agents do in their own name: comments, notes and chat messages by
//! their author (a session writes as its agent, a key names one only with
//! `comments:as_agent`; an agent's chat message is theirs, `chat`), author-less comments and the SLA, the agent a
//! CSAT rating names, assigning on reply, personal API keys, a viewer's
//! internal notes (`viewer`), and TOTP
//! secrets sealed at rest.

mod assign;
mod chat;
mod comments;
mod csat;
mod keys;
mod totp;
mod viewer;

use serde_json::{Value, json};

use crate::accounts::{Browser, agent_with_password, sign_in};
use crate::support::{TestApp, TestCompany, TestResponse};

/// An agent of `acme` (built-in `role`) signed in to TEST data, where the
/// company's key works too.
pub async fn signed_in(app: &TestApp, acme: &TestCompany, email: &str, role: &str) -> Browser {
    agent_with_password(app, acme, email, role).await;
    sign_in(app, email, "test").await
}

/// The signed-in agent's user id.
pub fn user_id(browser: &Browser) -> Value {
    browser.me["user"]["id"].clone()
}

/// A change by the agent's session (with its CSRF token) to `/api/v1{path}`.
pub async fn send(
    app: &TestApp,
    browser: &Browser,
    method: reqwest::Method,
    path: &str,
    body: Value,
) -> TestResponse {
    browser
        .send(app, method, &format!("/api/v1{path}"), Some(body), true)
        .await
}

/// A MEDIUM ticket made by `acme`'s key; its id.
pub async fn ticket(app: &TestApp, acme: &TestCompany) -> String {
    let r = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": "Printer on fire", "entityId": acme.entity.id}),
        )
        .await;
    r.assert_status(201)["id"].as_str().expect("id").to_string()
}
