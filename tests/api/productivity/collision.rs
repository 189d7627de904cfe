//! Collision on tickets: agents' sockets say they view, type on or left a
//! ticket, and the ticket's subscribers (`ticket:<id>`) hear each change of
//! an agent's state as a `viewing` event; closing a socket, or holds not
//! refreshed in time, clear it.

use std::time::Duration;

use serde_json::{Value, json};

use super::ticket;
use crate::accounts::Browser;
use crate::agents::{signed_in, user_id};
use crate::backend_tests;
use crate::chat::client::Client;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    an_agent_viewing_a_ticket_is_announced_to_its_subscribers,
    two_agents_on_one_ticket_see_each_other_viewing,
    typing_on_a_ticket_is_announced_and_clears_after_its_time,
    leaving_a_ticket_is_announced,
    a_closed_socket_leaves_the_ticket,
    a_viewer_who_stops_refreshing_expires,
    a_late_subscriber_hears_who_views_the_ticket_now,
    a_company_keys_socket_cannot_view_a_ticket,
    a_ticket_of_another_company_cannot_be_watched,
    an_agent_of_another_company_viewing_the_ticket_is_refused_and_not_announced,
);

/// Two signed-in agents of one company, each with a socket, and a ticket.
struct Desk {
    app: TestApp,
    acme: TestCompany,
    ann: Browser,
    bob: Browser,
    ann_socket: Client,
    bob_socket: Client,
    ticket: String,
}

async fn socket(app: &TestApp, browser: &Browser) -> Client {
    Client::try_with_headers(
        app,
        &[("Cookie", &browser.cookie), ("Origin", &app.address)],
    )
    .await
    .expect("socket opens")
}

/// Bob is subscribed to the ticket's channel (past its empty snapshot).
async fn desk(app: TestApp) -> Desk {
    let acme = app.company().await;
    let ann = signed_in(&app, &acme, "ann@acme.example", "agent").await;
    let bob = signed_in(&app, &acme, "bob@acme.example", "agent").await;
    let ticket = ticket(&app, &acme).await;
    let ann_socket = socket(&app, &ann).await;
    let mut bob_socket = socket(&app, &bob).await;
    bob_socket
        .send(json!({"type": "subscribe", "channel": format!("ticket:{ticket}")}))
        .await;
    assert_eq!(bob_socket.next().await["type"], "subscribed");
    bob_socket.assert_nothing_before_pong().await;
    Desk {
        app,
        acme,
        ann,
        bob,
        ann_socket,
        bob_socket,
        ticket,
    }
}

impl Desk {
    async fn ann_sends(&mut self, kind: &str) {
        self.ann_socket
            .send(json!({"type": kind, "ticketId": self.ticket}))
            .await;
    }

    /// Bob's next `viewing` event: Ann's (viewing, typing).
    async fn bob_hears(&mut self) -> (bool, bool) {
        let frame = self.bob_socket.next_of("viewing").await;
        assert_eq!(frame["channel"], format!("ticket:{}", self.ticket));
        assert_eq!(frame["data"]["userId"], user_id(&self.ann));
        (
            frame["data"]["viewing"].as_bool().expect("viewing"),
            frame["data"]["typing"].as_bool().expect("typing"),
        )
    }

    fn advance(&self, by: Duration) {
        let by = chrono::TimeDelta::from_std(by).expect("duration");
        self.app.state.clock.advance(by);
    }
}

async fn an_agent_viewing_a_ticket_is_announced_to_its_subscribers(backend: Backend) {
    let mut desk = desk(TestApp::spawn(backend).await).await;

    desk.ann_sends("viewing").await;

    let frame = desk.bob_socket.next_of("viewing").await;
    assert_eq!(
        frame["data"],
        json!({"ticketId": desk.ticket, "userId": user_id(&desk.ann),
               "name": "Agent ann@acme.example", "viewing": true, "typing": false})
    );
}

async fn two_agents_on_one_ticket_see_each_other_viewing(backend: Backend) {
    let mut desk = desk(TestApp::spawn(backend).await).await;
    let channel = format!("ticket:{}", desk.ticket);
    desk.ann_socket
        .send(json!({"type": "subscribe", "channel": channel}))
        .await;
    assert_eq!(desk.ann_socket.next().await["type"], "subscribed");
    desk.ann_socket.assert_nothing_before_pong().await;

    desk.ann_sends("viewing").await;
    desk.bob_socket
        .send(json!({"type": "viewing", "ticketId": desk.ticket}))
        .await;
    let bob_id = user_id(&desk.bob);

    // Each hears the other (and their own view too: a console skips it).
    let ann_heard = desk
        .ann_socket
        .next_where(|f| f["type"] == "viewing" && f["data"]["userId"] == bob_id)
        .await;
    let bob_heard = desk
        .bob_socket
        .next_where(|f| f["type"] == "viewing" && f["data"]["userId"] == user_id(&desk.ann))
        .await;
    assert_eq!(
        (&ann_heard["data"]["viewing"], &bob_heard["data"]["viewing"]),
        (&json!(true), &json!(true))
    );
}

async fn typing_on_a_ticket_is_announced_and_clears_after_its_time(backend: Backend) {
    let mut desk = desk(TestApp::spawn(backend).await).await;
    desk.ann_sends("typing").await;
    assert_eq!(desk.bob_hears().await, (true, true));

    desk.advance(Duration::from_secs(5));

    assert_eq!(desk.bob_hears().await, (true, false));
}

async fn leaving_a_ticket_is_announced(backend: Backend) {
    let mut desk = desk(TestApp::spawn(backend).await).await;
    desk.ann_sends("viewing").await;
    assert_eq!(desk.bob_hears().await, (true, false));

    desk.ann_sends("leave").await;

    assert_eq!(desk.bob_hears().await, (false, false));
}

async fn a_closed_socket_leaves_the_ticket(backend: Backend) {
    let mut desk = desk(TestApp::spawn(backend).await).await;
    desk.ann_sends("viewing").await;
    assert_eq!(desk.bob_hears().await, (true, false));

    desk.ann_socket.ws.close(None).await.expect("closed");

    assert_eq!(desk.bob_hears().await, (false, false));
}

async fn a_viewer_who_stops_refreshing_expires(backend: Backend) {
    let mut desk = desk(TestApp::spawn(backend).await).await;
    desk.ann_sends("viewing").await;
    assert_eq!(desk.bob_hears().await, (true, false));

    desk.advance(Duration::from_secs(30));

    assert_eq!(desk.bob_hears().await, (false, false));
}

async fn a_late_subscriber_hears_who_views_the_ticket_now(backend: Backend) {
    let mut desk = desk(TestApp::spawn(backend).await).await;
    desk.ann_sends("viewing").await;
    assert_eq!(desk.bob_hears().await, (true, false));
    let cy = signed_in(&desk.app, &desk.acme, "cy@acme.example", "agent").await;
    let mut late = socket(&desk.app, &cy).await;

    late.send(json!({"type": "subscribe", "channel": format!("ticket:{}", desk.ticket)}))
        .await;

    assert_eq!(late.next().await["type"], "subscribed");
    let snapshot = late.next().await;
    assert_eq!(
        (
            &snapshot["type"],
            &snapshot["data"]["userId"],
            &snapshot["data"]["viewing"]
        ),
        (&json!("viewing"), &user_id(&desk.ann), &json!(true))
    );
}

async fn a_company_keys_socket_cannot_view_a_ticket(backend: Backend) {
    let mut desk = desk(TestApp::spawn(backend).await).await;
    let mut service = Client::key(&desk.app, &desk.acme.key).await;

    service
        .send(json!({"type": "viewing", "id": "v", "ticketId": desk.ticket}))
        .await;

    let reply = service.next_of("error").await;
    assert_eq!(
        (&reply["id"], &reply["code"]),
        (&json!("v"), &json!("insufficient_scope"))
    );
    desk.bob_socket.assert_nothing_before_pong().await;
}

async fn a_ticket_of_another_company_cannot_be_watched(backend: Backend) {
    let mut desk = desk(TestApp::spawn(backend).await).await;
    let other = desk.app.company().await;
    let theirs = ticket(&desk.app, &other).await;

    desk.ann_socket
        .send(json!({"type": "subscribe", "id": "s", "channel": format!("ticket:{theirs}")}))
        .await;

    let reply: Value = desk.ann_socket.next().await;
    assert_eq!(
        (&reply["id"], &reply["code"]),
        (&json!("s"), &json!("not_found"))
    );
}

async fn an_agent_of_another_company_viewing_the_ticket_is_refused_and_not_announced(
    backend: Backend,
) {
    let mut desk = desk(TestApp::spawn(backend).await).await;
    let other = desk.app.company().await;
    let eve = signed_in(&desk.app, &other, "eve@other.example", "agent").await;
    let mut eve_socket = socket(&desk.app, &eve).await;

    eve_socket
        .send(json!({"type": "viewing", "id": "v", "ticketId": desk.ticket}))
        .await;

    let reply = eve_socket.next_of("error").await;
    assert_eq!(
        (&reply["id"], &reply["code"]),
        (&json!("v"), &json!("not_found"))
    );
    desk.bob_socket.assert_nothing_before_pong().await;
}
