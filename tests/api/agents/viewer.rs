//! The built-in `viewer` role and internal notes: a viewer's session
//! posts internal notes but no public reply, and reads notes on every way a
//! comment is read (the comment list, the change feed, search, the ticket
//! socket channels), as a key with `tickets:write` does.

use reqwest::Method;
use serde_json::{Value, json};

use super::{send, signed_in, ticket};
use crate::access::assert_message;
use crate::accounts::Browser;
use crate::backend_tests;
use crate::chat::client::Client;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    a_viewer_posts_an_internal_note,
    a_viewer_cannot_post_a_public_reply,
    a_viewer_lists_internal_notes,
    a_viewer_reads_internal_notes_in_the_change_feed,
    a_viewer_finds_a_ticket_by_its_internal_note,
    a_viewers_socket_carries_internal_notes,
    a_viewers_open_socket_keeps_internal_notes_after_a_credentials_change,
);

const NOTE: &str = "Customer abused the last refund";

/// A viewer of `acme` signed in to TEST data.
async fn viewer(app: &TestApp, acme: &TestCompany) -> Browser {
    signed_in(app, acme, "vera@acme.example", "viewer").await
}

/// Posts `NOTE` as an internal note on `ticket` by `acme`'s key.
async fn note_by_key(app: &TestApp, acme: &TestCompany, ticket: &str) -> String {
    let r = app
        .post(
            &format!("/tickets/{ticket}/comments"),
            &acme.key,
            json!({"body": NOTE, "isInternal": true}),
        )
        .await;
    r.assert_status(201)["id"].as_str().expect("id").to_string()
}

fn ids(page: &Value) -> Vec<&str> {
    page["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|row| row["id"].as_str().expect("id"))
        .collect()
}

async fn a_viewer_posts_an_internal_note(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let vera = viewer(&app, &acme).await;
    let ticket = ticket(&app, &acme).await;

    let r = send(
        &app,
        &vera,
        Method::POST,
        &format!("/tickets/{ticket}/comments"),
        json!({"body": "Looks like fraud to me", "isInternal": true}),
    )
    .await;

    let note = r.assert_status(201);
    assert_eq!(
        (&note["isInternal"], &note["authorId"]),
        (&json!(true), &vera.me["user"]["id"])
    );
}

async fn a_viewer_cannot_post_a_public_reply(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let vera = viewer(&app, &acme).await;
    let ticket = ticket(&app, &acme).await;
    let path = format!("/tickets/{ticket}/comments");

    let r = send(
        &app,
        &vera,
        Method::POST,
        &path,
        json!({"body": "Hi there"}),
    )
    .await;

    assert_message(
        &r,
        403,
        "insufficient_scope",
        "Missing required permission: tickets:write",
    );
    let listed = app.get(&path, &acme.key).await;
    assert_eq!(listed.assert_status(200)["total"], json!(0));
}

async fn a_viewer_lists_internal_notes(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let vera = viewer(&app, &acme).await;
    let ticket = ticket(&app, &acme).await;
    let note = note_by_key(&app, &acme, &ticket).await;

    let listed = vera
        .get(&app, &format!("/api/v1/tickets/{ticket}/comments"))
        .await;

    assert_eq!(ids(listed.assert_status(200)), vec![note.as_str()]);
}

async fn a_viewer_reads_internal_notes_in_the_change_feed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let vera = viewer(&app, &acme).await;
    let ticket = ticket(&app, &acme).await;
    let note = note_by_key(&app, &acme, &ticket).await;

    let feed = vera.get(&app, "/api/v1/changes?types=comment").await;

    assert_eq!(ids(feed.assert_status(200)), vec![note.as_str()]);
}

async fn a_viewer_finds_a_ticket_by_its_internal_note(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let vera = viewer(&app, &acme).await;
    let ticket = ticket(&app, &acme).await;
    note_by_key(&app, &acme, &ticket).await;

    let found = vera.get(&app, "/api/v1/tickets?q=abused").await;

    assert_eq!(ids(found.assert_status(200)), vec![ticket.as_str()]);
}

async fn a_viewers_socket_carries_internal_notes(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let vera = viewer(&app, &acme).await;
    let mut socket = watching_tickets(&app, &vera).await;
    let ticket = ticket(&app, &acme).await;

    note_by_key(&app, &acme, &ticket).await;

    let frame = socket.next_of("comment.created").await;
    assert_eq!(frame["data"]["data"]["body"], NOTE);
}

async fn a_viewers_open_socket_keeps_internal_notes_after_a_credentials_change(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let vera = viewer(&app, &acme).await;
    let mut socket = watching_tickets(&app, &vera).await;
    let ticket = ticket(&app, &acme).await;

    // Changes that leave vera's grant as it was, by both ways a change
    // reaches the sockets: a key's scopes cut (its notice, over the bus)
    // and the sockets' re-check of their credentials.
    let scopes = json!(["chat:read", "tickets:read", "tickets:write"]);
    let r = app
        .post(
            "/api-keys",
            &acme.key,
            json!({"name": "Back office", "scopes": scopes}),
        )
        .await;
    let key_id = r.assert_status(201)["id"].as_str().expect("id").to_string();
    app.patch(
        &format!("/api-keys/{key_id}"),
        &acme.key,
        json!({"scopes": ["chat:read", "tickets:read"]}),
    )
    .await
    .assert_status(200);
    supportdesk::realtime::credentials::recheck_once(
        &app.state.db,
        &app.state.realtime,
        &app.state.clock,
    )
    .await
    .expect("re-checked");
    note_by_key(&app, &acme, &ticket).await;

    let frame = socket.next_of("comment.created").await;
    assert_eq!(frame["data"]["data"]["body"], NOTE);
}

/// A socket of `vera`'s session (opened from the service's own origin)
/// subscribed to `tickets`.
async fn watching_tickets(app: &TestApp, vera: &Browser) -> Client {
    let headers = [
        ("Cookie", vera.cookie.as_str()),
        ("Origin", app.address.as_str()),
    ];
    let mut socket = Client::try_with_headers(app, &headers)
        .await
        .expect("socket opens");
    socket.subscribe("tickets").await;
    socket
}
