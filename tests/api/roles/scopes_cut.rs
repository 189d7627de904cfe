//! A custom role whose scopes are cut while its holders' sockets are open:
//! as for a key whose scopes are cut, the socket keeps its `tickets`
//! subscription but hears only what the role reads now, from the first
//! event after the change (the change's notice travels the bus ahead of
//! them); without `chat:read` it is closed.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::{custom_role, path_of};
use crate::accounts::{agent_with_password, sign_in};
use crate::backend_tests;
use crate::chat::client::Client;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    cutting_a_roles_tickets_write_stops_internal_notes_on_its_holders_socket,
    cutting_a_roles_chat_read_closes_its_holders_socket,
);

/// Ada, holding custom role "Desk" (chat and tickets), signed in with a
/// socket open; the role and her id.
async fn holder_socket(app: &TestApp, acme: &TestCompany) -> (Value, uuid::Uuid, Client) {
    let role = custom_role(
        app,
        acme,
        "Desk",
        &["chat:read", "tickets:read", "tickets:write"],
    )
    .await;
    let ada = agent_with_password(app, acme, "ada@example.com", "agent").await;
    app.patch(
        &format!("/users/{ada}"),
        &acme.key,
        json!({"roleName": "Desk"}),
    )
    .await
    .assert_status(200);
    let browser = sign_in(app, "ada@example.com", "test").await;
    let socket = Client::try_with_headers(
        app,
        &[("Cookie", &browser.cookie), ("Origin", &app.address)],
    )
    .await
    .expect("socket opens");
    (role, ada, socket)
}

async fn cutting_a_roles_tickets_write_stops_internal_notes_on_its_holders_socket(
    backend: Backend,
) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (role, ada, mut socket) = holder_socket(&app, &acme).await;
    socket.subscribe("tickets").await;
    let ticket = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": "Refund", "entityId": acme.entity.id}),
        )
        .await
        .assert_status(201)
        .clone();
    assert_eq!(socket.next().await["type"], "ticket.created");
    let comments = format!("{}/comments", path_of("tickets", &ticket));

    app.patch(
        &path_of("roles", &role),
        &acme.key,
        json!({"scopes": ["chat:read", "tickets:read"]}),
    )
    .await
    .assert_status(200);

    for (body, internal) in [("Customer is difficult", true), ("We are on it", false)] {
        app.post(
            &comments,
            &acme.key,
            json!({"body": body, "authorId": ada, "isInternal": internal}),
        )
        .await
        .assert_status(201);
    }
    let first = socket.next().await;
    assert_eq!(first["type"], "comment.created", "{first}");
    assert_eq!(first["data"]["data"]["body"], "We are on it", "{first}");
    socket.assert_nothing_before_pong().await;
}

async fn cutting_a_roles_chat_read_closes_its_holders_socket(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (role, _ada, mut socket) = holder_socket(&app, &acme).await;

    app.patch(
        &path_of("roles", &role),
        &acme.key,
        json!({"scopes": ["tickets:read"]}),
    )
    .await
    .assert_status(200);

    let closed = socket
        .closed_by(Instant::now() + Duration::from_secs(10))
        .await;
    assert_eq!(closed, (4401, "scope removed".to_owned()));
}
