//! Sockets at scale and across nodes: fan-out between two nodes, a slow
//! socket's bounded queue, a thousand sockets on one session, shutdown.

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use supportdesk::auth::{Mode, ScopeSet};
use supportdesk::realtime::bus::BusMessage;
use supportdesk::realtime::protocol::{HubChannel, Topic};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use uuid::Uuid;

use super::client::Client;
use super::{WAIT, id_of, new_session, tenant};
use crate::backend_tests;
use crate::support::{Backend, TestApp, eventually};

backend_tests!(
    two_nodes_share_messages_and_presence,
    a_socket_that_stops_reading_is_closed,
    a_burst_of_frames_arrives_whole_and_in_order,
    a_thousand_sockets_each_receive_the_message,
    shutdown_closes_sockets,
    idle_sockets_are_pinged_and_dead_ones_dropped,
);

pub(crate) async fn two_nodes_share_messages_and_presence(backend: Backend) {
    let node_a = TestApp::spawn(backend).await;
    let node_b = node_a.spawn_peer().await;
    let acme = node_a.company().await;
    let session = new_session(&node_a, &acme, json!({})).await;
    let id = id_of(&session);
    let mut on_a = Client::key(&node_a, &acme.key).await;
    on_a.subscribe(&format!("session:{id}")).await;
    on_a.subscribe("presence").await;

    // Posted on B (the shared database has the session).
    node_b
        .post(
            &format!("/chat/sessions/{id}/messages"),
            &acme.key,
            json!({"body": "via B", "senderType": "visitor"}),
        )
        .await
        .assert_status(201);
    let ann = Uuid::now_v7();
    node_b
        .post(
            "/chat/agent-presence",
            &acme.key,
            json!({"userId": ann, "name": "Ann", "email": "ann@acme.test"}),
        )
        .await
        .assert_status(200);

    if node_a.config.redis_url.is_none() {
        // Without Redis each node is alone: nothing crosses to node A.
        on_a.assert_nothing_before_pong().await;
        eprintln!("cross-node delivery needs Redis: checked on the postgres backend");
        return;
    }
    let message = on_a.next().await;
    assert_eq!(message["type"], "chat.message");
    assert_eq!(message["data"]["body"], "via B");
    let online = on_a.next().await;
    assert_eq!(online["type"], "presence");
    assert_eq!(online["data"]["userId"], json!(ann));
    let listed = node_a.get("/chat/agent-presence", &acme.key).await;
    assert_eq!(listed.assert_status(200)["data"][0]["userId"], json!(ann));

    // A visitor token minted on A opens a socket on B (same secret).
    let mut visitor_on_b =
        Client::token(&node_b, session["visitorToken"].as_str().expect("token")).await;
    visitor_on_b.subscribe(&format!("session:{id}")).await;
    visitor_on_b
        .send(json!({"type": "message", "body": "from B's socket"}))
        .await;
    assert_eq!(visitor_on_b.next().await["type"], "chat.message");
    assert_eq!(on_a.next().await["data"]["body"], "from B's socket");
}

async fn a_socket_that_stops_reading_is_closed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let hub = app.state.realtime.hub.clone();
    let mut slow = Client::key(&app, &acme.key).await;
    slow.subscribe("presence").await;
    assert_eq!(hub.connections(), 1);
    let topic = Topic::new(tenant(&acme), HubChannel::Presence);
    let payload: std::sync::Arc<str> = format!(
        "{{\"type\":\"presence\",\"channel\":\"presence\",\"pad\":\"{}\"}}",
        "x".repeat(32 * 1024)
    )
    .into();
    let message = BusMessage {
        topic: topic.bus_topic(None),
        payload,
    };

    // The client never reads. Events are dispatched straight into the hub,
    // as the bus would (4 000 × 32 KiB: 128 MiB if it were all buffered).
    let total = 4_000usize;
    let mut accepted = 0usize;
    for i in 0..total {
        accepted += app.state.realtime.dispatch(&message);
        if i % 50 == 0 {
            // Events arrive over time, not in one burst: the socket's
            // task gets to run (and to find its client not reading).
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        if hub.connections() == 0 {
            break;
        }
    }
    eventually("the slow socket is dropped", || async {
        hub.connections() == 0
    })
    .await;
    assert_eq!(hub.subscribers(&topic), 0);
    // What the socket took is bounded (kernel buffers plus its queue); the
    // rest was refused rather than buffered.
    assert!(accepted < total, "accepted {accepted} of {total}");

    // Reading again, the client finds the close frame 1013 after what the
    // kernel had buffered.
    let closed = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(frame) = slow.ws.next().await {
            match frame {
                Ok(Message::Close(frame)) => return frame.map(|f| f.code),
                Ok(_) => continue,
                Err(err) => {
                    eprintln!("read error: {err}");
                    return None;
                }
            }
        }
        None
    })
    .await
    .expect("closed before the timeout");
    assert_eq!(closed, Some(CloseCode::Again), "closed with 1013");
}

async fn a_burst_of_frames_arrives_whole_and_in_order(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let mut socket = Client::key(&app, &acme.key).await;
    socket.subscribe("presence").await;
    let topic = Topic::new(tenant(&acme), HubChannel::Presence).bus_topic(None);

    // Queued in one go, without yielding, as a fan-out burst does: the
    // socket finds them all waiting (more than one write batch, fewer
    // than its queue holds).
    let burst = 200;
    for n in 0..burst {
        let message = BusMessage {
            topic: topic.clone(),
            payload: format!("{{\"type\":\"presence\",\"channel\":\"presence\",\"n\":{n}}}").into(),
        };
        assert_eq!(app.state.realtime.dispatch(&message), 1);
    }

    let mut received = Vec::new();
    for _ in 0..burst {
        received.push(socket.next().await["n"].as_u64().expect("n"));
    }
    assert_eq!(received, (0..burst).collect::<Vec<u64>>());
    socket.assert_nothing_before_pong().await;
}

async fn a_thousand_sockets_each_receive_the_message(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({})).await;
    let id = id_of(&session);
    let channel = format!("session:{id}");
    // Key-header sockets: one token may hold only a few sockets at once, and
    // each handshake spends one request of the key's allowance.
    let key = app
        .key_with(acme.company.id, Mode::Test, ScopeSet::all(), 10_000)
        .await;

    let count = 1_000;
    let clients: Vec<Client> = futures::stream::iter(0..count)
        .map(|_| {
            let (app, key, channel) = (&app, key.clone(), channel.clone());
            async move {
                let mut client = Client::key(app, &key).await;
                client.subscribe(&channel).await;
                client
            }
        })
        .buffer_unordered(50)
        .collect()
        .await;
    let topic = Topic::new(
        tenant(&acme),
        HubChannel::Session(Uuid::parse_str(&id).expect("id")),
    );
    assert_eq!(app.state.realtime.hub.subscribers(&topic), count);

    let sent = app
        .post(
            &format!("/chat/sessions/{id}/messages"),
            &acme.key,
            json!({"body": "Hello, everyone", "senderType": "system"}),
        )
        .await;
    let message_id = sent.assert_status(201)["id"].clone();
    let received: Vec<Value> = futures::stream::iter(clients)
        .map(|mut client| async move {
            let frame = client.next().await;
            client.assert_nothing_before_pong().await;
            frame
        })
        .buffer_unordered(100)
        .collect()
        .await;
    assert_eq!(received.len(), count);
    for frame in received {
        assert_eq!(frame["type"], "chat.message");
        assert_eq!(frame["data"]["id"], message_id);
    }
}

async fn shutdown_closes_sockets(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let mut socket = Client::key(&app, &acme.key).await;
    socket.subscribe("presence").await;
    let hub = app.state.realtime.hub.clone();
    app.shutdown_handle().trigger();
    let closed = tokio::time::timeout(WAIT, async {
        while let Some(frame) = socket.ws.next().await {
            if let Ok(Message::Close(frame)) = frame {
                return frame.map(|f| f.code);
            }
        }
        None
    })
    .await
    .expect("closed");
    assert_eq!(closed, Some(CloseCode::Away), "closed with 1001");
    tokio::time::timeout(Duration::from_secs(15), app.stop())
        .await
        .expect("the server stops with a socket open");
    eventually("the socket is gone", || async { hub.connections() == 0 }).await;
}

async fn idle_sockets_are_pinged_and_dead_ones_dropped(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    app.state
        .realtime
        .set_keepalive(Duration::from_millis(250), Duration::from_millis(1500));
    let acme = app.company().await;
    let hub = app.state.realtime.hub.clone();
    let mut alive = Client::key(&app, &acme.key).await;
    let mut dead = Client::key(&app, &acme.key).await;
    dead.subscribe("presence").await;
    alive.subscribe("presence").await;

    // The live client keeps reading (answering pings, as browsers do); the
    // dead one reads nothing more after subscribing.
    let mut pings = 0;
    let until = tokio::time::Instant::now() + Duration::from_millis(2500);
    while let Ok(Some(Ok(frame))) = tokio::time::timeout_at(until, alive.ws.next()).await {
        if matches!(frame, Message::Ping(_)) {
            pings += 1;
        }
    }
    assert!(pings >= 1, "an idle socket is pinged");
    eventually("the dead socket is dropped", || async {
        hub.connections() == 1
    })
    .await;
    alive.assert_nothing_before_pong().await;
    drop(dead);
}
