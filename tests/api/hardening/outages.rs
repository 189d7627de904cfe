//! Fault tests of the dependencies: Redis stopped and restarted under load
//! (REST degrades, presence and fan-out come back), Postgres restarted
//! under a write load (no accepted write lost). Private Redis and Postgres
//! instances only (see `procs`); loopback only; every wait is bounded.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use super::procs::{PrivatePostgres, PrivateRedis, main_backend};
use crate::chat::client::Client;
use crate::support::{Backend, TestApp, TestResponse, eventually, eventually_within};

async fn readyz(app: &TestApp) -> (u16, Value) {
    let r = TestResponse::from(app.client.get(app.url("/readyz")).send().await).await;
    (r.status, r.body)
}

async fn new_user(app: &TestApp, key: &str, name: &str) -> String {
    let r = app
        .post(
            "/users",
            key,
            json!({"name": name, "email": format!("{}@example.com", uuid::Uuid::new_v4().simple())}),
        )
        .await;
    r.assert_status(201)["id"]
        .as_str()
        .expect("user id")
        .to_string()
}

async fn heartbeat(app: &TestApp, key: &str, user: &str) -> TestResponse {
    app.post(
        "/chat/agent-presence",
        key,
        json!({"userId": user, "name": "Ada", "email": "ada@example.com"}),
    )
    .await
}

async fn online(app: &TestApp, key: &str, user: &str) -> bool {
    let r = app.get("/chat/agent-presence", key).await;
    r.status == 200
        && r.body["data"]
            .as_array()
            .is_some_and(|a| a.iter().any(|agent| agent["userId"] == user))
}

/// Waits for a chat.message frame with `body`, skipping others.
async fn receives(socket: &mut Client, body: &str, limit: Duration) -> bool {
    use futures::StreamExt;
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        if left.is_zero() {
            return false;
        }
        match tokio::time::timeout(left, socket.ws.next()).await {
            Ok(Some(Ok(tokio_tungstenite::tungstenite::Message::Text(text)))) => {
                let frame: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                if frame["type"] == "chat.message" && frame["data"]["body"] == body {
                    return true;
                }
            }
            Ok(Some(Ok(_))) => continue,
            _ => return false,
        }
    }
}

/// Redis stopped and restarted while requests, sockets and heartbeats run:
/// REST keeps working on the local limiter, /readyz reports the outage,
/// presence and cross-node fan-out resume by themselves afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_outage_degrades_and_recovers() {
    let Some(mut redis) = PrivateRedis::start().await else {
        return;
    };
    let url = redis.url();
    let app = TestApp::spawn_with(main_backend(), |c| {
        c.redis_url = Some(url);
        c.presence_ttl = Duration::from_secs(5);
    })
    .await;
    let peer = app.spawn_peer().await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let user = new_user(&app, key, "Ada").await;
    let session = app
        .post(
            "/chat/sessions",
            key,
            json!({"entityId": acme.entity.id, "visitorName": "Vi"}),
        )
        .await;
    let session = session.assert_status(201)["id"]
        .as_str()
        .expect("session")
        .to_string();
    let messages = format!("/chat/sessions/{session}/messages");

    // Before: a message sent through one node reaches a socket on the other.
    let mut socket = Client::key(&peer, key).await;
    socket.subscribe(&format!("session:{session}")).await;
    app.post(
        &messages,
        key,
        json!({"body": "before", "senderType": "visitor"}),
    )
    .await
    .assert_status(201);
    assert!(receives(&mut socket, "before", Duration::from_secs(10)).await);
    heartbeat(&app, key, &user).await.assert_status(200);
    assert!(online(&peer, key, &user).await);
    assert_eq!(readyz(&app).await.0, 200);

    // Load on both nodes for the whole outage.
    let stop = Arc::new(AtomicBool::new(false));
    let mut load = Vec::new();
    for node in [app.url(""), peer.url("")] {
        let stop = stop.clone();
        let key = key.to_string();
        let client = app.client.clone();
        load.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let r = TestResponse::from(
                    client
                        .get(format!("{node}/api/v1/tickets"))
                        .header("X-API-Key", &key)
                        .send()
                        .await,
                )
                .await;
                seen.push((r.status, r.header("x-ratelimit-limit").is_some()));
                // Paced so that an outage stretched by a loaded machine
                // (tens of seconds) stays inside the key's hourly allowance
                // of 1,000 requests: a 429 here would be the limit, not the
                // outage.
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            seen
        }));
    }

    redis.kill().await;
    eventually_within(
        "/readyz reports Redis down",
        Duration::from_secs(15),
        || async {
            let (status, body) = readyz(&app).await;
            status == 503 && body["redis"] == "unavailable" && body["store"] == "ok"
        },
    )
    .await;
    // REST keeps working, with rate-limit headers from the local limiter.
    let r = app.get("/tickets", key).await;
    r.assert_status(200);
    assert!(r.header("x-ratelimit-remaining").is_some());
    app.post(
        "/tickets",
        key,
        json!({"subject": "During the outage", "entityId": acme.entity.id}),
    )
    .await
    .assert_status(201);
    let sent = app
        .post(
            &messages,
            key,
            json!({"body": "during", "senderType": "visitor"}),
        )
        .await;
    assert_eq!(
        sent.status, 201,
        "a message is stored without Redis: {}",
        sent.text
    );
    // Presence lives in Redis only: a heartbeat cannot be recorded.
    heartbeat(&app, key, &user)
        .await
        .assert_error(503, "unavailable");

    redis.resume().await;
    eventually_within(
        "/readyz is ready again",
        Duration::from_secs(20),
        || async { readyz(&app).await.0 == 200 && readyz(&peer).await.0 == 200 },
    )
    .await;
    stop.store(true, Ordering::Relaxed);
    for task in load {
        for (status, headers) in task.await.expect("load task") {
            assert_eq!(status, 200, "REST kept answering 200 through the outage");
            assert!(headers, "rate-limit headers on every answer");
        }
    }

    // Presence resumes (the restarted Redis is empty: a heartbeat re-adds).
    eventually_within("presence works again", Duration::from_secs(20), || async {
        heartbeat(&app, key, &user).await.status == 200 && online(&peer, key, &user).await
    })
    .await;
    // Fan-out resumes on the same socket, across nodes.
    let mut delivered = false;
    for n in 0..40 {
        let body = format!("after {n}");
        app.post(
            &messages,
            key,
            json!({"body": body, "senderType": "visitor"}),
        )
        .await
        .assert_status(201);
        if receives(&mut socket, &body, Duration::from_millis(500)).await {
            delivered = true;
            break;
        }
    }
    assert!(
        delivered,
        "cross-node fan-out resumed after Redis came back"
    );
    peer.stop().await;
    app.stop().await;
}

/// Postgres restarted (immediate stop: connections cut) under a write load:
/// requests fail with a 503 `unavailable` JSON error, the pool reconnects, and
/// every ticket whose 201 the client saw is in the database afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_restart_under_load_loses_no_accepted_write() {
    let Some(pg) = PrivatePostgres::start().await else {
        return;
    };
    let url = pg.url();
    let app = TestApp::spawn_with(Backend::Sqlite, |c| {
        c.database_url = url;
        c.run_workers = false;
    })
    .await;
    let acme = app.company().await;
    let key = acme.key.clone();
    let entity = acme.entity.id;

    let stop = Arc::new(AtomicBool::new(false));
    // How many of the load's writes were accepted and refused so far: the
    // phases below last until the load has met them.
    let accepted_so_far = Arc::new(AtomicUsize::new(0));
    let refused_so_far = Arc::new(AtomicUsize::new(0));
    let mut writers = Vec::new();
    for w in 0..4 {
        let stop = stop.clone();
        let (accepted_so_far, refused_so_far) = (accepted_so_far.clone(), refused_so_far.clone());
        let key = key.clone();
        let client = app.client.clone();
        let url = app.url("/api/v1/tickets");
        writers.push(tokio::spawn(async move {
            let mut seen: Vec<(u16, Value)> = Vec::new();
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let r = TestResponse::from(
                    client
                        .post(&url)
                        .header("X-API-Key", &key)
                        .json(&json!({"subject": format!("w{w} n{n}"), "entityId": entity}))
                        .send()
                        .await,
                )
                .await;
                let tally = if r.status == 201 {
                    &accepted_so_far
                } else {
                    &refused_so_far
                };
                tally.fetch_add(1, Ordering::SeqCst);
                seen.push((r.status, r.body));
                // Paced: a steady load of four clients, not a flood.
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            seen
        }));
    }
    // The load is under way, its writes accepted, when the server stops.
    eventually("a write of the load accepted", async || {
        app.get("/tickets?limit=1", &key).await.body["total"].as_u64() > Some(0)
    })
    .await;
    let refused_before_stop = refused_so_far.load(Ordering::SeqCst);
    pg.stop_immediately();
    // While the server is down (not while it is shutting down or starting:
    // see below) a write is refused as unavailable.
    app.post(
        "/tickets",
        &key,
        json!({"subject": "while down", "entityId": entity}),
    )
    .await
    .assert_error(503, "unavailable");
    // The load meets the outage too before the server comes back.
    eventually(
        "a write of the load refused while the server is down",
        async || refused_so_far.load(Ordering::SeqCst) > refused_before_stop,
    )
    .await;
    pg.start_again();
    // Writes succeed again once the pool has reconnected.
    let client = app.client.clone();
    eventually_within(
        "writes succeed after the restart",
        Duration::from_secs(30),
        || {
            let client = client.clone();
            let (url, key) = (app.url("/api/v1/tickets"), key.clone());
            async move {
                client
                    .post(&url)
                    .header("X-API-Key", &key)
                    .json(&json!({"subject": "probe", "entityId": entity}))
                    .send()
                    .await
                    .is_ok_and(|r| r.status() == 201)
            }
        },
    )
    .await;
    // ...and the load's own writes are accepted again before it stops.
    let accepted_at_restart = accepted_so_far.load(Ordering::SeqCst);
    eventually(
        "a write of the load accepted after the restart",
        async || accepted_so_far.load(Ordering::SeqCst) > accepted_at_restart,
    )
    .await;
    stop.store(true, Ordering::Relaxed);

    let mut accepted = Vec::new();
    let mut refused = 0;
    for writer in writers {
        for (status, body) in writer.await.expect("writer") {
            if status == 201 {
                accepted.push(body["id"].as_str().expect("id").to_string());
            } else {
                // Connections cut by an immediate stop and refused while
                // the server starts are both "store unavailable".
                refused += 1;
                assert_eq!(status, 503, "a refused write: {body}");
                assert_eq!(body["code"], "unavailable", "a refused write: {body}");
                assert_eq!(body["status"], 503, "the JSON error shape: {body}");
            }
        }
    }
    eprintln!(
        "postgres restart: {} writes accepted, {refused} refused as unavailable",
        accepted.len()
    );
    assert!(!accepted.is_empty());
    for id in &accepted {
        app.get(&format!("/tickets/{id}"), &key)
            .await
            .assert_status(200);
    }
    let listed = app.get("/tickets?limit=1", &key).await;
    let total = listed.assert_status(200)["total"].as_u64().expect("total");
    assert!(total as usize >= accepted.len());
    app.stop().await;
}
