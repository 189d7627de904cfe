//! A custom role whose ticket scopes are cut while its holders' sockets are
//! open: as for a key whose scopes are cut, the socket keeps its `tickets`
//! subscription but hears only what the role reads now, from the first
//! event after the change (the change's notice travels the bus ahead of
//! them).

use serde_json::json;

use super::{custom_role, path_of};
use crate::accounts::{agent_with_password, sign_in};
use crate::backend_tests;
use crate::chat::client::Client;
use crate::support::{Backend, TestApp};

backend_tests!(cutting_a_roles_tickets_write_stops_internal_notes_on_its_holders_socket,);

async fn cutting_a_roles_tickets_write_stops_internal_notes_on_its_holders_socket(
    backend: Backend,
) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let role = custom_role(
        &app,
        &acme,
        "Desk",
        &["chat:read", "tickets:read", "tickets:write"],
    )
    .await;
    let ada = agent_with_password(&app, &acme, "ada@example.com", "agent").await;
    app.patch(
        &format!("/users/{ada}"),
        &acme.key,
        json!({"roleName": "Desk"}),
    )
    .await
    .assert_status(200);
    let browser = sign_in(&app, "ada@example.com", "test").await;
    let mut socket = Client::try_with_headers(
        &app,
        &[("Cookie", &browser.cookie), ("Origin", &app.address)],
    )
    .await
    .expect("socket opens");
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
