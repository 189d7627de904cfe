//! Fault tests: dependencies that fail and come back, a service killed
//! mid-delivery, receivers that misbehave, clients that attack. Private
//! Redis and Postgres instances only (see `procs`); loopback only; every
//! wait is bounded.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::procs::{PrivatePostgres, PrivateRedis, ServiceProcess, free_port};
use crate::chat::client::Client;
use crate::outbound::support::{Receiver, Reply, create_webhook};
use crate::support::{
    Backend, TestApp, TestResponse, eventually, eventually_within, post_refused_body,
};

/// Postgres + the private Redis when Postgres is configured, else SQLite.
fn main_backend() -> Backend {
    if std::env::var("TEST_DATABASE_URL").is_ok_and(|u| !u.is_empty()) {
        Backend::Postgres
    } else {
        Backend::Sqlite
    }
}

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

/// The service killed with SIGKILL while webhooks and emails are being
/// delivered: after a restart every delivery is attempted again and every
/// email is written; nothing is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_during_delivery_loses_no_webhook_or_email() {
    const TICKETS: usize = 25;
    let dir = tempfile::tempdir().expect("temp dir");
    let env: Vec<(&str, String)> = vec![
        (
            "DATABASE_URL",
            format!("sqlite://{}/kill.db?mode=rwc", dir.path().display()),
        ),
        ("SUPPORTDESK_DATA_DIR", dir.path().display().to_string()),
        ("SUPPORTDESK_WEBHOOK_ALLOW_PRIVATE", "true".into()),
        ("SUPPORTDESK_WEBHOOK_TIMEOUT_SECS", "1".into()),
        ("SUPPORTDESK_WEBHOOK_RETRY_DELAYS", "1,1,1,1".into()),
        ("RUST_LOG", "info".into()),
    ];
    let (_company, entity, key) = ServiceProcess::provision(&env, "Killed");

    // The receiver answers after 800 ms, so deliveries are in flight (claimed,
    // leased, waiting for the answer) when the service is killed.
    let (receiver, receiver_port, calls) = slow_receiver(Duration::from_millis(800)).await;
    let port = free_port();
    let log = dir.path().join("service.log");
    let service = ServiceProcess::serve(&env, port, &log).await;
    let client = reqwest::Client::new();
    let r = client
        .post(service.url("/api/v1/company/webhooks"))
        .header("X-API-Key", &key)
        .json(&json!({
            "name": "Receiver",
            "url": format!("http://127.0.0.1:{receiver_port}/hook"),
            "events": ["ticket.created"],
        }))
        .send()
        .await
        .expect("webhook");
    assert_eq!(r.status(), 201);
    let webhook: Value = r.json().await.expect("webhook JSON");
    let webhook = webhook["id"].as_str().expect("webhook id").to_string();
    let mut created = Vec::new();
    for n in 0..TICKETS {
        let r = client
            .post(service.url("/api/v1/tickets"))
            .header("X-API-Key", &key)
            .json(&json!({
                "subject": format!("Killed {n}"),
                "entityId": entity,
                "visitorEmail": format!("visitor{n}@example.com"),
            }))
            .send()
            .await
            .expect("ticket");
        assert_eq!(r.status(), 201);
        let ticket: Value = r.json().await.expect("ticket JSON");
        created.push(ticket["ticketNumber"].as_str().expect("number").to_string());
        if n == TICKETS / 2 {
            // The worker has claimed deliveries and is sending them.
            eventually("the first deliveries sent", async || {
                calls.load(Ordering::SeqCst) > 0
            })
            .await;
        }
    }
    service.kill().await;

    // What the kill left: deliveries not yet delivered, some of them
    // claimed (leased) by the dead process.
    let db = sqlx::SqlitePool::connect(&env[0].1)
        .await
        .expect("open the db");
    let (undelivered, leased): (i64, i64) = sqlx::query_as(
        "SELECT count(*), (SELECT count(*) FROM outbox_jobs WHERE kind = 'webhook.delivery' \
         AND status = 'pending' AND locked_until IS NOT NULL) \
         FROM webhook_deliveries WHERE status <> 'delivered'",
    )
    .fetch_one(&db)
    .await
    .expect("count deliveries");
    db.close().await;
    eprintln!("killed with {undelivered} deliveries undelivered, {leased} of them leased");
    assert!(
        undelivered > 0,
        "the kill came before every delivery was done"
    );

    let service = ServiceProcess::serve(&env, port, &log).await;
    let deliveries = service.url(&format!(
        "/api/v1/company/webhooks/{webhook}/deliveries?limit=100"
    ));
    eventually_within(
        "every delivery is delivered after the restart",
        Duration::from_secs(60),
        || {
            let (client, url, key) = (client.clone(), deliveries.clone(), key.clone());
            async move {
                let Ok(r) = client.get(&url).header("X-API-Key", &key).send().await else {
                    return false;
                };
                let body: Value = r.json().await.unwrap_or(Value::Null);
                body["total"] == TICKETS
                    && body["data"]
                        .as_array()
                        .is_some_and(|d| d.iter().all(|d| d["status"] == "delivered"))
            }
        },
    )
    .await;
    let numbers: std::collections::HashSet<String> = receiver
        .hits()
        .iter()
        .filter_map(|hit| {
            hit.json()["data"]["ticketNumber"]
                .as_str()
                .map(str::to_string)
        })
        .collect();
    for number in &created {
        assert!(numbers.contains(number), "{number} reached the receiver");
    }
    // Every visitor email is written (the file mailer), at least once.
    let mail_dir = dir.path().join("mail");
    eventually_within(
        "every email is written after the restart",
        Duration::from_secs(150),
        || {
            let mail_dir = mail_dir.clone();
            let created = created.clone();
            async move {
                let texts: Vec<String> = std::fs::read_dir(&mail_dir)
                    .map(|entries| {
                        entries
                            .filter_map(|e| e.ok())
                            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                            .collect()
                    })
                    .unwrap_or_default();
                created
                    .iter()
                    .all(|number| texts.iter().any(|t| t.contains(number.as_str())))
            }
        },
    )
    .await;
    service.kill().await;
}

/// A receiver that answers 200 after `delay`: the recording receiver behind
/// a small delaying TCP proxy, the proxy's port, and how many connections
/// it has taken (calls under way or done). The proxy binds port 0 itself (a
/// port chosen earlier could be taken by a parallel test).
async fn slow_receiver(delay: Duration) -> (Receiver, u16, Arc<AtomicUsize>) {
    let receiver = Receiver::always(200).await;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .expect("bind the receiver proxy");
    let port = listener.local_addr().expect("proxy address").port();
    let upstream = receiver.port;
    let calls = Arc::new(AtomicUsize::new(0));
    let taken = calls.clone();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            taken.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                if let Ok(mut outbound) = TcpStream::connect(("127.0.0.1", upstream)).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    (receiver, port, calls)
}

/// A receiver that is down, one that hangs, one that answers garbage: each
/// follows the retry schedule to the end (five attempts, then failed), and
/// none of them holds up the healthy receiver's deliveries.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn misbehaving_receivers_keep_their_schedule_and_block_nothing() {
    const EVENTS: usize = 5;
    // The last retry waits 10 s, so no bad schedule can end before the
    // healthy receiver has every event: the check below sees them pending.
    let app = TestApp::spawn_with(main_backend(), |c| {
        c.webhook_retry_delays = vec![
            Duration::from_millis(300),
            Duration::from_millis(300),
            Duration::from_millis(300),
            Duration::from_secs(10),
        ];
        c.webhook_timeout = Duration::from_secs(1);
    })
    .await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let healthy = Receiver::always(200).await;
    let hanging = Receiver::start(|_| Reply::Hang).await;
    // Garbage: accepts, writes bytes that are not HTTP, closes.
    let garbage = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let garbage_port = garbage.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = garbage.accept().await {
            let _ = socket.write_all(b"\x00\xffnot http at all\r\n\r\n").await;
        }
    });
    let down_port = free_port();
    let (healthy_id, _) = create_webhook(&app, key, &healthy.url("/ok"), &["ticket.created"]).await;
    let mut bad = Vec::new();
    for url in [
        format!("http://127.0.0.1:{down_port}/down"),
        hanging.url("/hang"),
        format!("http://127.0.0.1:{garbage_port}/garbage"),
    ] {
        bad.push(create_webhook(&app, key, &url, &["ticket.created"]).await.0);
    }
    for n in 0..EVENTS {
        app.post(
            "/tickets",
            key,
            json!({"subject": format!("Event {n}"), "entityId": acme.entity.id}),
        )
        .await
        .assert_status(201);
    }
    // The healthy receiver gets every event while the others still retry.
    eventually_within(
        "the healthy receiver has every event",
        Duration::from_secs(20),
        || async { healthy.count() >= EVENTS },
    )
    .await;
    for id in &bad {
        let r = app
            .get(&format!("/company/webhooks/{id}/deliveries"), key)
            .await;
        let pending = r.assert_status(200)["data"]
            .as_array()
            .expect("deliveries")
            .iter()
            .filter(|d| d["status"] != "failed")
            .count();
        assert_eq!(pending, EVENTS, "no bad schedule has ended yet: {}", r.text);
    }
    // Every bad delivery ends failed after exactly five attempts.
    for id in &bad {
        let path = format!("/company/webhooks/{id}/deliveries?limit=100");
        eventually_within(
            "the schedule runs to the end",
            Duration::from_secs(60),
            || async {
                let r = app.get(&path, key).await;
                r.body["total"] == EVENTS
                    && r.body["data"].as_array().is_some_and(|d| {
                        d.iter()
                            .all(|d| d["status"] == "failed" && d["attemptCount"] == 5)
                    })
            },
        )
        .await;
    }
    let r = app
        .get(&format!("/company/webhooks/{healthy_id}/deliveries"), key)
        .await;
    assert!(
        r.assert_status(200)["data"]
            .as_array()
            .expect("deliveries")
            .iter()
            .all(|d| d["status"] == "delivered" && d["attemptCount"] == 1)
    );
    app.stop().await;
}

/// A service with a 2 s header timeout, and a company key.
async fn guarded_service() -> (TestApp, String) {
    let app = TestApp::spawn_with(Backend::Sqlite, |c| {
        c.header_read_timeout = Duration::from_secs(2);
    })
    .await;
    let key = app.company().await.key;
    (app, key)
}

/// 100 slowloris connections (a header byte every 300 ms) are cut at the
/// header timeout, and other clients are served meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn slowloris_connections_are_cut_while_others_are_served() {
    let (app, key) = guarded_service().await;
    let addr = format!("127.0.0.1:{}", app.port);
    let mut slow = Vec::new();
    for _ in 0..100 {
        let mut stream = TcpStream::connect(&addr).await.expect("connect");
        stream
            .write_all(b"GET /api/v1/tickets HTTP/1.1\r\nHost: x\r\n")
            .await
            .expect("write");
        slow.push(tokio::spawn(async move {
            // Returns how long the server kept the connection.
            let started = tokio::time::Instant::now();
            for _ in 0..100 {
                // The attack itself: a header byte now and then.
                tokio::time::sleep(Duration::from_millis(300)).await;
                if stream.write_all(b"X").await.is_err() {
                    break;
                }
                let mut buf = [0u8; 256];
                if let Ok(Ok(0) | Err(_)) =
                    tokio::time::timeout(Duration::from_millis(1), stream.read(&mut buf)).await
                {
                    break;
                }
            }
            started.elapsed()
        }));
    }
    for _ in 0..10 {
        app.get("/tickets", &key).await.assert_status(200);
    }
    for task in slow {
        let kept = task.await.expect("slowloris task");
        assert!(
            kept < Duration::from_secs(20),
            "a slowloris connection was kept {kept:?}"
        );
    }
    app.stop().await;
}

/// A client that pipelines requests and never reads the answers stops
/// neither the service nor other clients.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_client_that_never_reads_does_not_stop_the_service() {
    let (app, key) = guarded_service().await;
    let addr = format!("127.0.0.1:{}", app.port);
    let mut never_reads = TcpStream::connect(&addr).await.expect("connect");
    let request =
        format!("GET /api/v1/openapi.json HTTP/1.1\r\nHost: x\r\nX-API-Key: {key}\r\n\r\n");
    let greedy = tokio::spawn(async move {
        for _ in 0..2000 {
            if tokio::time::timeout(
                Duration::from_secs(2),
                never_reads.write_all(request.as_bytes()),
            )
            .await
            .map_or(true, |r| r.is_err())
            {
                break;
            }
        }
        never_reads
    });
    for _ in 0..10 {
        app.get("/tickets", &key).await.assert_status(200);
    }
    let _stuck = greedy.await.expect("greedy client");
    app.get("/tickets", &key).await.assert_status(200);
    app.stop().await;
}

/// A head larger than the server's read buffer (64 KiB) is refused before
/// any handler runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_oversized_header_is_431() {
    let (app, key) = guarded_service().await;
    let huge = "a".repeat(200 * 1024);
    let r = app
        .api(Method::GET, "/tickets", Some(&key))
        .header("X-Padding", huge.as_str())
        .send()
        .await;
    assert_eq!(r.expect("an answer to the oversized header").status(), 431);
    app.get("/tickets", &key).await.assert_status(200);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_oversized_body_is_413() {
    let (app, key) = guarded_service().await;
    let big_body = format!("{{\"subject\": \"{}\"}}", "b".repeat(2 * 1024 * 1024));
    let r = post_refused_body(
        &app,
        "/tickets",
        &key,
        "application/json",
        vec![big_body.into_bytes()],
    )
    .await;
    r.assert_error(413, "payload_too_large");
    app.get("/tickets", &key).await.assert_status(200);
    app.stop().await;
}

/// An oversized socket frame drops that socket only.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_oversized_socket_frame_drops_that_socket_only() {
    use futures::{SinkExt, StreamExt};
    let (app, key) = guarded_service().await;
    let mut socket = Client::key(&app, &key).await;
    let frame = "x".repeat(2 * 1024 * 1024);
    let _ = socket
        .ws
        .send(tokio_tungstenite::tungstenite::Message::text(frame))
        .await;
    // The server stops reading at the frame's header and drops the
    // connection (no close handshake), so the client's next read fails.
    let end = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match socket.ws.next().await {
                Some(Ok(tokio_tungstenite::tungstenite::Message::Text(_))) => continue,
                end => return end,
            }
        }
    })
    .await
    .expect("the socket ends within 10 s");
    assert!(
        matches!(end, Some(Err(_))),
        "the oversized frame dropped the connection: {end:?}"
    );
    let mut other = Client::key(&app, &key).await;
    other.send(json!({"type": "ping", "id": "still"})).await;
    assert_eq!(other.next().await["type"], "pong");
    app.stop().await;
}

/// 10,000 invalid (well-formed, unknown) keys from one IP: the IP is
/// throttled, a valid key the node has served before from the same IP is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn invalid_keys_from_one_ip_are_throttled_and_a_valid_key_is_served() {
    let (app, key) = guarded_service().await;
    // A throttled address gets no key lookups, except of keys already served.
    app.get("/tickets", &key).await.assert_status(200);
    let invalid: Vec<String> = (0..10_000)
        .map(|_| supportdesk::auth::key::generate(supportdesk::auth::Mode::Test))
        .collect();
    let invalid = Arc::new(invalid);
    let mut attackers = Vec::new();
    for part in 0..16 {
        let (client, url, invalid) = (
            app.client.clone(),
            app.url("/api/v1/tickets"),
            invalid.clone(),
        );
        attackers.push(tokio::spawn(async move {
            let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
            for k in invalid.iter().skip(part).step_by(16) {
                let status = client
                    .get(&url)
                    .header("X-API-Key", k)
                    .send()
                    .await
                    .map(|r| r.status().as_u16())
                    .unwrap_or(0);
                *statuses.entry(status).or_default() += 1;
            }
            statuses
        }));
    }
    // A legitimate client keeps being served during the attack.
    for _ in 0..20 {
        app.get("/tickets", &key).await.assert_status(200);
        // Spread over the attack, as a person's requests would be.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut totals = std::collections::BTreeMap::<u16, usize>::new();
    for attacker in attackers {
        for (status, n) in attacker.await.expect("attacker") {
            *totals.entry(status).or_default() += n;
        }
    }
    assert_eq!(totals.values().sum::<usize>(), 10_000);
    // Unknown keys are refused (401) until the IP is throttled (429).
    assert_eq!(
        totals.keys().copied().collect::<Vec<_>>(),
        [401, 429],
        "{totals:?}"
    );
    assert!(
        totals.get(&429).copied().unwrap_or(0) >= 9_000,
        "{totals:?}"
    );
    app.get("/tickets", &key).await.assert_status(200);
    app.stop().await;
}
