//! What a visitor token is bound to beyond its lifetime: the identity
//! secret that vouched for the visitor (a rotation without grace ends it),
//! the agent-reply email's continue link (a one-time link token traded for
//! a visitor token on the service's own page), and the history list (a
//! recent identity token, never an old session's token).

use serde_json::{Value, json};
use supportdesk::widget::identity::sign;

use super::tokens::read;
use super::{start_chat, text, widget_get, widget_post};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany, TestResponse};

backend_tests!(
    rotation_without_grace_ends_tokens_of_the_old_secret,
    rotation_without_grace_leaves_anonymous_tokens_alone,
    a_reply_email_links_the_services_own_page_without_a_visitor_token,
    an_email_link_is_traded_for_a_visitor_token_once,
    a_retried_link_trade_with_its_idempotency_key_replays_the_first,
    an_email_link_token_is_no_visitor_token,
    the_history_needs_a_recent_identity_token,
    the_history_lists_a_verified_visitors_chats_for_a_fresh_identity_token,
    a_visitor_token_lists_only_its_own_session,
);

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

fn claims(sub: &str, issued_ago: i64) -> Value {
    json!({"sub": sub, "email": "kim@shop.example", "name": "Kim",
        "iat": now() - issued_ago, "exp": now() + 600})
}

pub(super) async fn rotate(app: &TestApp, acme: &TestCompany, grace: u64) -> String {
    let path = format!("/entities/{}/widget-secret/rotate", acme.entity.id);
    let r = app
        .post(&path, &acme.key, json!({"gracePeriodSeconds": grace}))
        .await;
    text(r.assert_status(200), "secret").to_string()
}

/// A verified chat of `sub`: its id and visitor token.
pub(super) async fn verified_chat(
    app: &TestApp,
    acme: &TestCompany,
    secret: &str,
    sub: &str,
) -> Value {
    start_chat(
        app,
        &acme.entity.widget_key_test,
        json!({"identityToken": sign(&claims(sub, 0), secret)}),
    )
    .await
}

async fn rotation_without_grace_ends_tokens_of_the_old_secret(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let secret = rotate(&app, &acme, 0).await;
    let chat = verified_chat(&app, &acme, &secret, "cust-1").await;
    let (id, token) = (text(&chat, "id"), text(&chat, "visitorToken"));
    read(&app, id, token).await.assert_status(200);

    rotate(&app, &acme, 0).await;
    let refused = read(&app, id, token).await;
    refused.assert_error(401, "invalid_token");
    let socket = crate::chat::client::Client::try_connect(&app, None, Some(token)).await;
    assert!(socket.is_err(), "a token of the old secret opened a socket");
}

async fn rotation_without_grace_leaves_anonymous_tokens_alone(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    rotate(&app, &acme, 0).await;
    let (id, token) = super::tokens::chat(&app, &acme).await;

    rotate(&app, &acme, 0).await;
    read(&app, &id, &token).await.assert_status(200);
}

async fn agent(app: &TestApp, acme: &TestCompany) -> String {
    let user = app
        .post(
            "/users",
            &acme.key,
            json!({"name": "Ann", "email": "ann@acme.example", "role": "AGENT"}),
        )
        .await;
    text(user.assert_status(201), "id").to_string()
}

/// A verified chat answered by an agent: its id, its visitor token and the
/// text of the reply email.
async fn answered(app: &TestApp, acme: &TestCompany) -> (String, String, String) {
    let secret = rotate(app, acme, 0).await;
    let chat = verified_chat(app, acme, &secret, "cust-5").await;
    let id = text(&chat, "id").to_string();
    let ann = agent(app, acme).await;
    app.post(
        &format!("/chat/sessions/{id}/messages"),
        &acme.key,
        json!({"body": "We are on it", "senderType": "agent", "senderId": ann}),
    )
    .await
    .assert_status(201);
    let mails = crate::csat::email_texts(app, acme.company.id).await;
    let mail = mails.last().expect("a reply email").clone();
    (id, text(&chat, "visitorToken").to_string(), mail)
}

fn link_token(mail: &str) -> &str {
    mail.split("&link=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("a continue link in the email")
}

async fn exchange(app: &TestApp, link: &str) -> TestResponse {
    widget_post(
        app,
        "/widget/v1/tokens/exchange",
        json!({"linkToken": link}),
    )
    .await
}

async fn a_reply_email_links_the_services_own_page_without_a_visitor_token(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let (id, token, mail) = answered(&app, &acme).await;

    let page = format!(
        "{}/widget/frame.html#session={id}&link=vl_",
        app.state.public_url
    );
    assert!(mail.contains(&page), "{mail} should link {page}");
    assert!(!mail.contains(&token), "{mail} carries the visitor token");
    let frame = widget_get(&app, "/widget/frame.html").await;
    assert_eq!(frame.status, 200, "the linked page exists without the demo");
}

async fn an_email_link_is_traded_for_a_visitor_token_once(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let (id, _, mail) = answered(&app, &acme).await;
    let link = link_token(&mail);

    let traded = exchange(&app, link).await;
    let traded = traded.assert_status(200).clone();
    assert_eq!(traded["sessionId"], id.as_str());
    let chat = read(&app, &id, text(&traded, "visitorToken")).await;
    assert_eq!(
        chat.assert_status(200)["messages"][0]["body"],
        "We are on it"
    );
    exchange(&app, link)
        .await
        .assert_error(401, "invalid_token");
}

/// A visitor whose answer was lost retries with the same key: the first
/// trade's answer, not "already used".
async fn a_retried_link_trade_with_its_idempotency_key_replays_the_first(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let (_, _, mail) = answered(&app, &acme).await;
    let body = json!({"linkToken": link_token(&mail)});
    let keyed = || async {
        let request = app
            .client
            .post(app.url("/widget/v1/tokens/exchange"))
            .header("Idempotency-Key", "trade-1")
            .json(&body);
        TestResponse::from(request.send().await).await
    };

    let first = keyed().await;
    first.assert_status(200);
    let retry = keyed().await;
    crate::idempotency::assert_replayed(&first, &retry);
}

async fn an_email_link_token_is_no_visitor_token(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let (id, _, mail) = answered(&app, &acme).await;

    read(&app, &id, link_token(&mail))
        .await
        .assert_error(401, "invalid_token");
}

async fn history(app: &TestApp, acme: &TestCompany, bearer: &str) -> TestResponse {
    let path = format!(
        "/widget/v1/sessions?widgetKey={}",
        acme.entity.widget_key_test
    );
    let request = app
        .client
        .get(app.url(&path))
        .header("Authorization", format!("Bearer {bearer}"));
    TestResponse::from(request.send().await).await
}

fn ids(list: &Value) -> Vec<&str> {
    list["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|session| text(session, "id"))
        .collect()
}

async fn the_history_needs_a_recent_identity_token(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let secret = rotate(&app, &acme, 0).await;
    verified_chat(&app, &acme, &secret, "cust-9").await;

    let stale = sign(&claims("cust-9", 11 * 60), &secret);
    history(&app, &acme, &stale)
        .await
        .assert_error(401, "invalid_token");
}

async fn the_history_lists_a_verified_visitors_chats_for_a_fresh_identity_token(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let secret = rotate(&app, &acme, 0).await;
    let first = verified_chat(&app, &acme, &secret, "cust-9").await;
    verified_chat(&app, &acme, &secret, "cust-10").await;
    let second = verified_chat(&app, &acme, &secret, "cust-9").await;

    let fresh = sign(&claims("cust-9", 0), &secret);
    let listed = history(&app, &acme, &fresh).await;
    let listed = listed.assert_status(200).clone();
    assert_eq!(ids(&listed), [text(&second, "id"), text(&first, "id")]);
    // Each with a token that reads it.
    let past = &listed["data"][1];
    read(&app, text(past, "id"), text(past, "visitorToken"))
        .await
        .assert_status(200);
}

async fn a_visitor_token_lists_only_its_own_session(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let secret = rotate(&app, &acme, 0).await;
    verified_chat(&app, &acme, &secret, "cust-9").await;
    let second = verified_chat(&app, &acme, &secret, "cust-9").await;

    let listed = history(&app, &acme, text(&second, "visitorToken")).await;
    assert_eq!(ids(listed.assert_status(200)), [text(&second, "id")]);
}
