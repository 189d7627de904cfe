//! A key whose ticket scopes are cut while its socket is open: the socket
//! keeps its `tickets` subscription but hears only what the key reads now,
//! from the first event after the change (the change's notice travels the
//! bus ahead of them); a change no notice reached applies at the sockets'
//! re-check.

use serde_json::json;
use supportdesk::auth::{Mode, Scope, ScopeSet};
use supportdesk::keys::NewKey;
use supportdesk::keys::store::KeyChanges;
use uuid::Uuid;

use super::{id_of, test_tenant, ticket, user};
use crate::backend_tests;
use crate::chat::client::Client;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    cutting_tickets_write_stops_internal_notes_on_an_open_socket,
    a_cut_no_notice_reached_applies_at_the_recheck,
);

/// A key of acme's with every scope, and its id.
async fn full_key(app: &TestApp, acme: &TestCompany) -> (Uuid, String) {
    let (record, key) = supportdesk::keys::store::create(
        &app.state.db,
        NewKey {
            company_id: acme.company.id,
            name: "console".into(),
            mode: Mode::Test,
            scopes: ScopeSet::all(),
            rate_limit: 1000,
            expires_at: None,
        },
        app.state.clock.now(),
    )
    .await
    .expect("key");
    (record.id, key)
}

/// A socket of `key` on `tickets`, past the `ticket.created` of a ticket
/// made after it subscribed; and the ticket's comments path.
async fn watching(app: &TestApp, acme: &TestCompany, key: &str) -> (Client, String) {
    let mut socket = Client::key(app, key).await;
    socket.subscribe("tickets").await;
    let t = ticket(app, acme, json!({"subject": "Refund"})).await;
    assert_eq!(socket.next().await["type"], "ticket.created");
    (socket, format!("/tickets/{}/comments", id_of(&t)))
}

/// An internal note, then a public reply; the socket's next frame is the
/// reply: the note never reached it.
async fn assert_only_the_reply_arrives(
    app: &TestApp,
    acme: &TestCompany,
    path: &str,
    socket: &mut Client,
) {
    let bob = user(app, acme.company.id, "Bob").await;
    for (body, internal) in [("Customer is difficult", true), ("We are on it", false)] {
        app.post(
            path,
            &acme.key,
            json!({"body": body, "authorId": bob.id, "isInternal": internal}),
        )
        .await
        .assert_status(201);
    }
    let first = socket.next().await;
    assert_eq!(first["type"], "comment.created", "{first}");
    assert_eq!(first["data"]["data"]["body"], "We are on it", "{first}");
    socket.assert_nothing_before_pong().await;
}

async fn cutting_tickets_write_stops_internal_notes_on_an_open_socket(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (key_id, key) = full_key(&app, &acme).await;
    let (mut socket, path) = watching(&app, &acme, &key).await;

    app.patch(
        &format!("/api-keys/{key_id}"),
        &acme.key,
        json!({"scopes": ["chat:read", "tickets:read"]}),
    )
    .await
    .assert_status(200);

    assert_only_the_reply_arrives(&app, &acme, &path, &mut socket).await;
}

async fn a_cut_no_notice_reached_applies_at_the_recheck(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (key_id, key) = full_key(&app, &acme).await;
    let (mut socket, path) = watching(&app, &acme, &key).await;

    // Straight to the store: no notice is published (as a lost bus message).
    let changes = KeyChanges {
        scopes: Some(ScopeSet::from_scopes([Scope::ChatRead, Scope::TicketsRead])),
        ..KeyChanges::default()
    };
    let tenant = test_tenant(acme.company.id);
    supportdesk::keys::store::update(
        &app.state.db,
        &tenant,
        key_id,
        changes,
        app.state.clock.now(),
    )
    .await
    .expect("scopes cut");
    supportdesk::realtime::credentials::recheck_once(
        &app.state.db,
        &app.state.realtime,
        &app.state.clock,
    )
    .await
    .expect("re-checked");

    assert_only_the_reply_arrives(&app, &acme, &path, &mut socket).await;
}
