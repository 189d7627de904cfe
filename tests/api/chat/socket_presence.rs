//! Agent presence over sockets: transitions pushed (private agents hidden),
//! expiry announced, and announced again for agents who come back or expire
//! one after the other.

use std::time::Duration;

use serde_json::{Value, json};
use uuid::Uuid;

use super::client::Client;
use super::new_session;
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    presence_transitions_are_pushed_and_private_agents_hidden,
    presence_expiry_is_pushed,
    an_agent_back_after_expiry_expires_again,
    agents_expiring_one_after_the_other_are_each_announced,
);

async fn presence_transitions_are_pushed_and_private_agents_hidden(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({})).await;
    let mut console = Client::key(&app, &acme.key).await;
    console.subscribe("presence").await;
    // Past the (empty) presence snapshot, so a heartbeat below cannot
    // show in it as well as live.
    console.assert_nothing_before_pong().await;
    let mut visitor = Client::token(&app, session["visitorToken"].as_str().expect("token")).await;
    visitor.subscribe("presence").await;
    visitor.assert_nothing_before_pong().await;

    let ann = Uuid::now_v7();
    let beat = json!({"userId": ann, "name": "Ann", "email": "ann@acme.test"});
    app.post("/chat/agent-presence", &acme.key, beat.clone())
        .await
        .assert_status(200);
    // Agents know the agent by user id, visitors by name only.
    for (socket, user_id) in [(&mut console, json!(ann)), (&mut visitor, Value::Null)] {
        let online = socket.next().await;
        assert_eq!(online["type"], "presence");
        assert_eq!(online["channel"], "presence");
        assert_eq!(online["data"]["userId"], user_id);
        assert_eq!(online["data"]["name"], "Ann");
        assert_eq!(online["data"]["online"], true);
        assert_eq!(online["data"]["visibility"], "PUBLIC");
        assert!(online["data"]["lastSeen"].is_string());
    }

    // A heartbeat that changes nothing pushes nothing.
    app.post("/chat/agent-presence", &acme.key, json!({"userId": ann}))
        .await
        .assert_status(200);
    console.assert_nothing_before_pong().await;
    visitor.assert_nothing_before_pong().await;

    // A PRIVATE agent: agents see it, visitors never do.
    let bob = Uuid::now_v7();
    app.post(
        "/chat/agent-presence",
        &acme.key,
        json!({"userId": bob, "name": "Bob", "email": "bob@acme.test", "visibility": "PRIVATE"}),
    )
    .await
    .assert_status(200);
    let private = console.next().await;
    assert_eq!(private["data"]["userId"], json!(bob));
    assert_eq!(private["data"]["visibility"], "PRIVATE");
    visitor.assert_nothing_before_pong().await;

    // A late subscriber gets a snapshot of who is online.
    let mut late_visitor =
        Client::token(&app, session["visitorToken"].as_str().expect("token")).await;
    late_visitor.subscribe("presence").await;
    let snapshot = late_visitor.next().await;
    assert_eq!(snapshot["data"]["name"], "Ann");
    assert_eq!(snapshot["data"]["userId"], Value::Null);
    late_visitor.assert_nothing_before_pong().await;

    // DELETE pushes offline (to visitors only for public agents).
    app.delete(&format!("/chat/agent-presence/{bob}"), &acme.key)
        .await
        .assert_status(200);
    let gone = console.next().await;
    assert_eq!(
        (&gone["data"]["userId"], &gone["data"]["online"]),
        (&json!(bob), &json!(false))
    );
    visitor.assert_nothing_before_pong().await;
    app.delete(&format!("/chat/agent-presence/{ann}"), &acme.key)
        .await
        .assert_status(200);
    for socket in [&mut console, &mut visitor] {
        let offline = socket.next().await;
        assert_eq!(offline["data"]["name"], "Ann");
        assert_eq!(offline["data"]["online"], false);
    }
    // Removing an absent agent pushes nothing.
    app.delete(&format!("/chat/agent-presence/{ann}"), &acme.key)
        .await
        .assert_status(200);
    console.assert_nothing_before_pong().await;
}

pub(crate) async fn presence_expiry_is_pushed(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.presence_ttl = Duration::from_secs(2)).await;
    let acme = app.company().await;
    let mut console = Client::key(&app, &acme.key).await;
    console.subscribe("presence").await;
    // Past the (empty) presence snapshot, so a heartbeat below cannot
    // show in it as well as live.
    console.assert_nothing_before_pong().await;
    let ann = Uuid::now_v7();
    let sent_at = std::time::Instant::now();
    app.post(
        "/chat/agent-presence",
        &acme.key,
        json!({"userId": ann, "name": "Ann", "email": "ann@acme.test"}),
    )
    .await
    .assert_status(200);
    assert_eq!(console.next().await["data"]["online"], true);

    // No more heartbeats: the sweeper announces the expiry.
    let offline = console.next().await;
    assert_eq!(offline["type"], "presence");
    assert_eq!(offline["data"]["userId"], json!(ann));
    assert_eq!(offline["data"]["online"], false);
    assert!(
        sent_at.elapsed() >= Duration::from_millis(1500),
        "not before the TTL"
    );
    let listed = app.get("/chat/agent-presence", &acme.key).await;
    assert_eq!(listed.assert_status(200)["data"], json!([]));
    // Exactly once.
    console.assert_nothing_before_pong().await;

    // Coming back after expiry is a new online transition.
    app.post("/chat/agent-presence", &acme.key, json!({"userId": ann}))
        .await
        .assert_status(200);
    assert_eq!(console.next().await["data"]["online"], true);
}

/// The sweep takes a company with no agents left off its list; the next
/// heartbeat must put it back so that the next expiry is announced too.
async fn an_agent_back_after_expiry_expires_again(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.presence_ttl = Duration::from_secs(1)).await;
    let acme = app.company().await;
    let mut console = Client::key(&app, &acme.key).await;
    console.subscribe("presence").await;
    // Past the (empty) presence snapshot, so a heartbeat below cannot
    // show in it as well as live.
    console.assert_nothing_before_pong().await;
    let ann = Uuid::now_v7();
    for _ in 0..2 {
        app.post(
            "/chat/agent-presence",
            &acme.key,
            json!({"userId": ann, "name": "Ann", "email": "ann@acme.test"}),
        )
        .await
        .assert_status(200);
        assert_eq!(console.next().await["data"]["online"], true);
        let offline = console.next().await;
        assert_eq!(
            (&offline["data"]["userId"], &offline["data"]["online"]),
            (&json!(ann), &json!(false))
        );
    }
}

/// A sweep that finds one agent expired and another still online comes
/// back for the second when its time is up.
async fn agents_expiring_one_after_the_other_are_each_announced(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.presence_ttl = Duration::from_secs(2)).await;
    let acme = app.company().await;
    let mut console = Client::key(&app, &acme.key).await;
    console.subscribe("presence").await;
    // Past the (empty) presence snapshot, so a heartbeat below cannot
    // show in it as well as live.
    console.assert_nothing_before_pong().await;
    let (ann, bob) = (Uuid::now_v7(), Uuid::now_v7());
    for (user, name) in [(ann, "Ann"), (bob, "Bob")] {
        app.post(
            "/chat/agent-presence",
            &acme.key,
            json!({"userId": user, "name": name, "email": format!("{name}@acme.test")}),
        )
        .await
        .assert_status(200);
        assert_eq!(console.next().await["data"]["online"], true);
        // Bob's expiry lies well after Ann's: separate sweeps. After
        // Bob's heartbeat this passes Ann's expiry and not yet his.
        app.state
            .clock
            .advance(chrono::TimeDelta::milliseconds(1200));
    }
    for user in [ann, bob] {
        let offline = console.next().await;
        assert_eq!(
            (&offline["data"]["userId"], &offline["data"]["online"]),
            (&json!(user), &json!(false))
        );
        // Past Bob's expiry too, once Ann's has been announced.
        app.state.clock.advance(chrono::TimeDelta::seconds(1));
    }
}
