//! Fault tests of outbound delivery: the service killed mid-delivery loses
//! no webhook or email, and receivers that are down, hang or answer garbage
//! keep their retry schedule without holding up a healthy one. Loopback
//! only; every wait is bounded.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::procs::{ServiceProcess, free_port, main_backend};
use crate::outbound::support::{Receiver, Reply, create_webhook};
use crate::support::{TestApp, eventually, eventually_within};

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
