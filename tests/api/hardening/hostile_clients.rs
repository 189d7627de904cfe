//! Fault tests of clients that attack: slowloris connections, a client
//! that never reads, oversized headers, bodies and socket frames, floods of
//! invalid keys from one address. Each leaves other clients served.
//! Loopback only; every wait is bounded.

use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::chat::client::Client;
use crate::support::{Backend, TestApp, post_refused_body};

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
