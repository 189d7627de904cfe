//! Socket limits: `message` frames spend the key's rate limit (agents) or
//! the session's message rate (visitors), refused with a `rate_limited`
//! error frame; the sockets one token may hold open at once are capped.

use std::time::Duration;

use serde_json::{Value, json};
use supportdesk::auth::{Mode, ScopeSet};
use supportdesk::config::MessageRate;
use tokio_tungstenite::tungstenite;

use super::client::Client;
use super::{agent, id_of, new_session};
use crate::backend_tests;
use crate::support::{Backend, TestApp, eventually};

backend_tests!(
    agent_message_frames_spend_the_key_allowance,
    socket_token_frames_spend_the_minting_key_allowance,
    visitor_message_frames_are_limited_per_session,
    a_visitor_token_holds_at_most_five_sockets,
    a_socket_token_holds_at_most_twenty_sockets,
    a_visitor_token_holds_at_most_five_sockets_across_nodes,
    without_redis_answers_each_node_counts_its_own_sockets,
    expired_places_of_a_dead_node_are_not_counted,
    an_open_socket_keeps_its_place_fresh,
);

/// The bodies of the messages stored in `session`.
async fn stored_bodies(app: &TestApp, key: &str, session: &str) -> Vec<String> {
    let read = app.get(&format!("/chat/sessions/{session}"), key).await;
    read.assert_status(200)["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["body"].as_str().expect("body").to_string())
        .collect()
}

/// The status of a refused handshake (panics if the socket opened).
async fn refused_status(app: &TestApp, token: &str) -> (u16, Value) {
    match Client::try_connect(app, None, Some(token)).await {
        Err(tungstenite::Error::Http(response)) => {
            let body = serde_json::from_slice(response.body().as_deref().unwrap_or_default())
                .unwrap_or(Value::Null);
            (response.status().as_u16(), body)
        }
        Err(other) => panic!("unexpected error {other}"),
        Ok(_) => panic!("the socket opened"),
    }
}

async fn agent_message_frames_spend_the_key_allowance(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = agent(&app, &acme, "Ann").await;
    let session = id_of(&new_session(&app, &acme, json!({})).await);
    let ten = app
        .key_with(acme.company.id, Mode::Test, ScopeSet::all(), 10)
        .await;
    // The handshake spends one request, each message frame one more.
    let mut console = Client::key(&app, &ten).await;
    for n in 0..12 {
        console
            .send(json!({"type": "message", "id": n, "sessionId": session,
                         "senderId": ann, "body": format!("reply {n}")}))
            .await;
    }
    let mut refused = Vec::new();
    for n in 0..12 {
        let frame = console.next().await;
        assert_eq!(frame["id"], n, "frames answer in order: {frame}");
        if frame["type"] == "error" {
            refused.push(frame);
        } else {
            assert_eq!(frame["type"], "chat.message", "{frame}");
        }
    }
    assert_eq!(refused.len(), 3, "{refused:?}");
    let first = &refused[0];
    let retry = first["retryAfter"].as_u64().expect("retryAfter");
    assert!((1..=360).contains(&retry), "retryAfter {retry}");
    assert_eq!(
        first,
        &json!({"type": "error", "id": 9, "code": "rate_limited", "retryAfter": retry,
                "error": format!("Rate limit exceeded. Try again in {retry} seconds.")})
    );
    let bodies = stored_bodies(&app, &acme.key, &session).await;
    let expected: Vec<String> = (0..9).map(|n| format!("reply {n}")).collect();
    assert_eq!(bodies, expected);
}

async fn socket_token_frames_spend_the_minting_key_allowance(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = agent(&app, &acme, "Ann").await;
    let session = id_of(&new_session(&app, &acme, json!({})).await);
    let five = app
        .key_with(acme.company.id, Mode::Test, ScopeSet::all(), 5)
        .await;
    let minted = app.post("/ws/tokens", &five, json!({})).await;
    let token = minted.assert_status(201)["token"]
        .as_str()
        .expect("token")
        .to_string();
    let mut console = Client::token(&app, &token).await;
    // Spend the rest of the key's allowance over REST.
    let mut spent = false;
    for _ in 0..5 {
        if app.get("/entities", &five).await.status == 429 {
            spent = true;
            break;
        }
    }
    assert!(spent, "the key's allowance ran out over REST");
    console
        .send(json!({"type": "message", "id": "m", "sessionId": session,
                     "senderId": ann, "body": "one too many"}))
        .await;
    let frame = console.next().await;
    assert_eq!(
        (&frame["type"], &frame["code"], &frame["id"]),
        (&json!("error"), &json!("rate_limited"), &json!("m"))
    );
    assert!(stored_bodies(&app, &acme.key, &session).await.is_empty());
}

async fn visitor_message_frames_are_limited_per_session(backend: Backend) {
    // A slow refill, so that none is earned back while the test runs.
    let app = TestApp::spawn_with(backend, |c| {
        c.visitor_message_rate = MessageRate {
            limit: 20,
            window: Duration::from_secs(2000),
        };
    })
    .await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({})).await;
    let token = session["visitorToken"].as_str().expect("token");
    let mut visitor = Client::token(&app, token).await;
    for n in 0..100 {
        visitor
            .send(json!({"type": "message", "id": n, "body": format!("hello {n}")}))
            .await;
    }
    let mut kinds = Vec::new();
    for _ in 0..100 {
        let frame = visitor.next().await;
        if frame["type"] == "error" {
            assert_eq!(frame["code"], "rate_limited", "{frame}");
            // One message is earned back every 2000/20 = 100 s.
            let retry = frame["retryAfter"].as_u64().expect("retryAfter");
            assert!((1..=100).contains(&retry), "{frame}");
        }
        kinds.push(frame["type"].as_str().expect("type").to_string());
    }
    let expected: Vec<&str> = std::iter::repeat_n("chat.message", 20)
        .chain(std::iter::repeat_n("error", 80))
        .collect();
    assert_eq!(kinds, expected);
    let bodies = stored_bodies(&app, &acme.key, &id_of(&session)).await;
    let visitor_bodies: Vec<&String> = bodies.iter().filter(|b| b.starts_with("hello")).collect();
    assert_eq!(visitor_bodies.len(), 20, "{bodies:?}");
    // Another session has its own allowance.
    let other = new_session(&app, &acme, json!({})).await;
    let mut second = Client::token(&app, other["visitorToken"].as_str().expect("token")).await;
    second
        .send(json!({"type": "message", "id": "x", "body": "hi"}))
        .await;
    // Past the new session's own `chat.session`, which can reach its
    // visitor's socket after it connects.
    assert_eq!(second.next_of("chat.message").await["type"], "chat.message");
}

async fn a_visitor_token_holds_at_most_five_sockets(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({})).await;
    let token = session["visitorToken"].as_str().expect("token");
    let mut open = Vec::new();
    for _ in 0..5 {
        let mut socket = Client::token(&app, token).await;
        socket.assert_nothing_before_pong().await;
        open.push(socket);
    }
    let (status, body) = refused_status(&app, token).await;
    assert_eq!(
        (status, &body["code"]),
        (429, &json!("rate_limited")),
        "{body}"
    );
    // Another session's token is not affected.
    let other = new_session(&app, &acme, json!({})).await;
    Client::token(&app, other["visitorToken"].as_str().expect("token")).await;
    // Closing one frees its place.
    let mut closed = open.pop().expect("a socket");
    closed.ws.close(None).await.expect("close sent");
    eventually("a place is free again", || async {
        Client::try_connect(&app, None, Some(token)).await.is_ok()
    })
    .await;
}

async fn a_socket_token_holds_at_most_twenty_sockets(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let minted = app.post("/ws/tokens", &acme.key, json!({})).await;
    let token = minted.assert_status(201)["token"]
        .as_str()
        .expect("token")
        .to_string();
    let mut open = Vec::new();
    for _ in 0..20 {
        open.push(Client::token(&app, &token).await);
    }
    let (status, body) = refused_status(&app, &token).await;
    assert_eq!(
        (status, &body["code"]),
        (429, &json!("rate_limited")),
        "{body}"
    );
    // The key itself is not capped.
    Client::key(&app, &acme.key).await;
}

/// Opens a socket with `token` on `app` and waits until it answers.
async fn open_socket(app: &TestApp, token: &str) -> Client {
    let mut socket = Client::token(app, token).await;
    socket.assert_nothing_before_pong().await;
    socket
}

async fn a_visitor_token_holds_at_most_five_sockets_across_nodes(backend: Backend) {
    let node_a = TestApp::spawn(backend).await;
    let node_b = node_a.spawn_peer().await;
    let acme = node_a.company().await;
    let session = new_session(&node_a, &acme, json!({})).await;
    let token = session["visitorToken"].as_str().expect("token");
    let mut on_a = Vec::new();
    for _ in 0..3 {
        on_a.push(open_socket(&node_a, token).await);
    }
    let mut on_b = Vec::new();
    for _ in 0..2 {
        on_b.push(open_socket(&node_b, token).await);
    }
    if node_a.config.redis_url.is_none() {
        // Without Redis each node counts alone: node B has room for three more.
        open_socket(&node_b, token).await;
        eprintln!("caps across nodes need Redis: checked on the postgres backend");
        return;
    }
    for node in [&node_a, &node_b] {
        let (status, body) = refused_status(node, token).await;
        assert_eq!(
            (status, &body["code"]),
            (429, &json!("rate_limited")),
            "{body}"
        );
    }
    // Closing one on node A frees a place on node B.
    let mut closed = on_a.pop().expect("a socket");
    closed.ws.close(None).await.expect("close sent");
    eventually("a place is free again on the other node", || async {
        Client::try_connect(&node_b, None, Some(token))
            .await
            .is_ok()
    })
    .await;
}

async fn without_redis_answers_each_node_counts_its_own_sockets(backend: Backend) {
    let node_a = TestApp::spawn(backend).await;
    let Some(redis) = node_a.state.redis.clone() else {
        eprintln!("a failing Redis needs Redis: checked on the postgres backend");
        return;
    };
    let node_b = node_a.spawn_peer().await;
    let acme = node_a.company().await;
    let session = new_session(&node_a, &acme, json!({})).await;
    let token = session["visitorToken"].as_str().expect("token");
    // A plain string where the sockets' set belongs: every call on it fails.
    let slots = node_a.state.realtime.slots.redis().expect("Redis slots");
    let key = slots.redis_key(&format!("visitor:{}", id_of(&session)));
    let _: () = redis::cmd("SET")
        .arg(&key)
        .arg("not a set")
        .query_async(&mut redis.clone())
        .await
        .expect("SET");
    let mut open = Vec::new();
    for _ in 0..5 {
        open.push(open_socket(&node_a, token).await);
    }
    let (status, body) = refused_status(&node_a, token).await;
    assert_eq!(
        (status, &body["code"]),
        (429, &json!("rate_limited")),
        "{body}"
    );
    open.push(open_socket(&node_b, token).await);
}

/// The Redis connection and the key of `session`'s sockets set, when the
/// app has Redis.
fn sockets_set(
    app: &TestApp,
    session: &Value,
) -> Option<(supportdesk::redis_conn::RedisConn, String)> {
    let redis = app.state.redis.clone()?;
    let slots = app.state.realtime.slots.redis().expect("Redis slots");
    Some((
        redis,
        slots.redis_key(&format!("visitor:{}", id_of(session))),
    ))
}

async fn expired_places_of_a_dead_node_are_not_counted(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({})).await;
    let token = session["visitorToken"].as_str().expect("token");
    let Some((mut redis, key)) = sockets_set(&app, &session) else {
        eprintln!("shared places need Redis: checked on the postgres backend");
        return;
    };
    // Another node's places: three long expired (it died), two live.
    let far_future = 32_503_680_000_000_i64; // year 3000, in ms
    let _: i64 = redis::cmd("ZADD")
        .arg(&key)
        .arg(1)
        .arg("dead-1")
        .arg(1)
        .arg("dead-2")
        .arg(1)
        .arg("dead-3")
        .arg(far_future)
        .arg("live-1")
        .arg(far_future)
        .arg("live-2")
        .query_async(&mut redis)
        .await
        .expect("ZADD");
    let mut open = Vec::new();
    for _ in 0..3 {
        open.push(open_socket(&app, token).await);
    }
    let (status, body) = refused_status(&app, token).await;
    assert_eq!(
        (status, &body["code"]),
        (429, &json!("rate_limited")),
        "{body}"
    );
}

async fn an_open_socket_keeps_its_place_fresh(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let session = new_session(&app, &acme, json!({})).await;
    let token = session["visitorToken"].as_str().expect("token");
    let Some((redis, key)) = sockets_set(&app, &session) else {
        eprintln!("shared places need Redis: checked on the postgres backend");
        return;
    };
    app.state
        .realtime
        .set_keepalive(Duration::from_millis(100), Duration::from_secs(60));
    let _socket = open_socket(&app, token).await;
    let expiry = || {
        let mut redis = redis.clone();
        let key = key.clone();
        async move {
            let members: Vec<(String, i64)> = redis::cmd("ZRANGE")
                .arg(&key)
                .arg(0)
                .arg(-1)
                .arg("WITHSCORES")
                .query_async(&mut redis)
                .await
                .expect("ZRANGE");
            assert_eq!(members.len(), 1, "{members:?}");
            members[0].1
        }
    };
    let first = expiry().await;
    eventually("the socket's place is refreshed", || async {
        expiry().await > first
    })
    .await;
}
