//! Scheduled replies and undo send: an agent's public reply is held for
//! the undo window (or scheduled for its `sendAt`) and delivered by the
//! delivery pass; cancelled before then, it is never delivered.

use std::time::Duration;

use serde_json::{Value, json};
use supportdesk::auth::{Mode, Scope, ScopeSet};

use super::{event_names, ticket};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany, assert_invalid};

backend_tests!(
    a_public_reply_is_held_for_the_undo_window_then_delivered_once,
    a_reply_cancelled_within_the_window_delivers_nothing,
    a_scheduled_reply_waits_for_its_send_at,
    a_sent_reply_cannot_be_cancelled,
    an_internal_note_is_sent_at_once,
    a_held_reply_is_hidden_from_a_reader_until_sent,
    send_at_on_a_note_is_400,
);

/// A node with a 10-second undo window whose passes the test runs.
async fn held(backend: Backend) -> TestApp {
    TestApp::spawn_with(backend, |c| {
        c.undo_send = Duration::from_secs(10);
        c.run_workers = false;
    })
    .await
}

/// A comment on ticket `id` by `acme`'s key.
async fn comment(app: &TestApp, acme: &TestCompany, id: &str, body: Value) -> Value {
    let r = app
        .post(&format!("/tickets/{id}/comments"), &acme.key, body)
        .await;
    r.assert_status(201).clone()
}

/// Moves the clock `secs` on and runs the delivery pass; how many it sent.
async fn deliver_after(app: &TestApp, secs: i64) -> usize {
    app.state.clock.advance(chrono::TimeDelta::seconds(secs));
    let signer = app.state.link_signer();
    let mail = supportdesk::sequences::email_outbound::MailReply;
    supportdesk::tickets::store::deliver_due(&app.state.db, app.state.clock.now(), &signer, &mail)
        .await
        .expect("delivery pass")
}

/// How many `comment.created` events the company has.
async fn comments_created(app: &TestApp, acme: &TestCompany) -> usize {
    let names = event_names(app, acme).await;
    names.iter().filter(|n| *n == "comment.created").count()
}

/// The delivery state of the ticket's first comment, as an agent sees it.
async fn first_state(app: &TestApp, acme: &TestCompany, id: &str) -> Value {
    let r = app.get(&format!("/tickets/{id}/comments"), &acme.key).await;
    r.assert_status(200)["data"][0]["deliveryState"].clone()
}

async fn a_public_reply_is_held_for_the_undo_window_then_delivered_once(backend: Backend) {
    let app = held(backend).await;
    let acme = app.company().await;
    let t = ticket(&app, &acme).await;
    let reply = comment(&app, &acme, &t, json!({"body": "On it"})).await;
    let created = chrono::DateTime::parse_from_rfc3339(reply["createdAt"].as_str().expect("at"))
        .expect("createdAt");
    let send_at = chrono::DateTime::parse_from_rfc3339(reply["sendAt"].as_str().expect("at"))
        .expect("sendAt");
    let before = (
        reply["deliveryState"].clone(),
        comments_created(&app, &acme).await,
    );
    let early = deliver_after(&app, 9).await;
    let due = deliver_after(&app, 1).await;
    let again = deliver_after(&app, 1).await;
    assert_eq!(
        (
            before,
            (send_at - created).num_seconds(),
            (early, due, again),
            first_state(&app, &acme, &t).await,
            comments_created(&app, &acme).await
        ),
        ((json!("held"), 0), 10, (0, 1, 0), json!("sent"), 1)
    );
}

async fn a_reply_cancelled_within_the_window_delivers_nothing(backend: Backend) {
    let app = held(backend).await;
    let acme = app.company().await;
    let t = ticket(&app, &acme).await;
    let reply = comment(&app, &acme, &t, json!({"body": "Oops, wrong ticket"})).await;
    let path = format!(
        "/tickets/{t}/comments/{}",
        reply["id"].as_str().expect("id")
    );
    let cancelled = app.delete(&path, &acme.key).await;
    cancelled.assert_status(200);
    assert_eq!(
        (
            cancelled.body["deliveryState"].clone(),
            deliver_after(&app, 60).await,
            comments_created(&app, &acme).await,
            first_state(&app, &acme, &t).await
        ),
        (json!("cancelled"), 0, 0, json!("cancelled"))
    );
}

async fn a_scheduled_reply_waits_for_its_send_at(backend: Backend) {
    let app = held(backend).await;
    let acme = app.company().await;
    let t = ticket(&app, &acme).await;
    let at = app.state.clock.now().plus(Duration::from_secs(3600));
    let body = json!({"body": "Good morning", "sendAt": at.to_rfc3339()});
    let reply = comment(&app, &acme, &t, body).await;
    let state = reply["deliveryState"].clone();
    let after_window = deliver_after(&app, 60).await;
    let at_time = deliver_after(&app, 3540).await;
    assert_eq!(
        (state, reply["sendAt"].clone(), after_window, at_time),
        (json!("scheduled"), json!(at.to_rfc3339()), 0, 1)
    );
}

async fn a_sent_reply_cannot_be_cancelled(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let t = ticket(&app, &acme).await;
    let reply = comment(&app, &acme, &t, json!({"body": "On it"})).await;
    assert_eq!(reply["deliveryState"], "sent");
    let path = format!(
        "/tickets/{t}/comments/{}",
        reply["id"].as_str().expect("id")
    );
    app.delete(&path, &acme.key)
        .await
        .assert_error(409, "conflict");
}

async fn an_internal_note_is_sent_at_once(backend: Backend) {
    let app = held(backend).await;
    let acme = app.company().await;
    let t = ticket(&app, &acme).await;
    let note = comment(
        &app,
        &acme,
        &t,
        json!({"body": "Call him", "isInternal": true}),
    )
    .await;
    assert_eq!(
        (
            note["deliveryState"].clone(),
            note["sendAt"].clone(),
            comments_created(&app, &acme).await
        ),
        (json!("sent"), Value::Null, 1)
    );
}

async fn a_held_reply_is_hidden_from_a_reader_until_sent(backend: Backend) {
    let app = held(backend).await;
    let acme = app.company().await;
    let reader = ScopeSet::from_scopes([Scope::TicketsRead]);
    let reader = app.key(acme.company.id, Mode::Test, reader).await;
    let t = ticket(&app, &acme).await;
    comment(&app, &acme, &t, json!({"body": "On it"})).await;
    let path = format!("/tickets/{t}/comments");
    let while_held = app.get(&path, &reader).await;
    while_held.assert_status(200);
    deliver_after(&app, 10).await;
    let once_sent = app.get(&path, &reader).await;
    once_sent.assert_status(200);
    assert_eq!(
        (
            while_held.body["total"].clone(),
            once_sent.body["total"].clone()
        ),
        (json!(0), json!(1))
    );
}

async fn send_at_on_a_note_is_400(backend: Backend) {
    let app = held(backend).await;
    let acme = app.company().await;
    let t = ticket(&app, &acme).await;
    let at = app.state.clock.now().plus(Duration::from_secs(3600));
    let body = json!({"body": "Later", "isInternal": true, "sendAt": at.to_rfc3339()});
    let r = app
        .post(&format!("/tickets/{t}/comments"), &acme.key, body)
        .await;
    assert_invalid(&r, &["sendAt"]);
}
