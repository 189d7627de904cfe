//! Several workers on two nodes sharing one store never send the same
//! attempt twice (Postgres: `FOR UPDATE SKIP LOCKED`; SQLite: one writer).

use std::collections::HashSet;
use std::time::Duration;

use supportdesk::auth::Mode;

use super::support::{self, Receiver, create_user, create_webhook, tenant};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(two_nodes_never_deliver_the_same_attempt_twice);

const EVENTS: usize = 40;

async fn two_nodes_never_deliver_the_same_attempt_twice(backend: Backend) {
    let app = TestApp::spawn_with(backend, support::fast_retries).await;
    let peer = app.spawn_peer().await;
    let acme = app.company().await;
    // Every third request fails once, so retries race too.
    let receiver = Receiver::start(|n| {
        if n % 3 == 0 {
            support::Reply::Status(500)
        } else {
            support::Reply::Status(200)
        }
    })
    .await;
    create_webhook(&app, &acme.key, &receiver.url("/"), &["user.created"]).await;
    let tenant = tenant(&acme, Mode::Test);
    for i in 0..EVENTS {
        create_user(&app, &tenant, &format!("User {i}")).await;
    }

    // Four workers, two per node, all stepping at once.
    let mut workers = Vec::new();
    for state in [&app.state, &peer.state, &app.state, &peer.state] {
        let state = state.clone();
        workers.push(tokio::spawn(async move {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
            while tokio::time::Instant::now() < deadline {
                let pending = pending_deliveries(&state).await;
                if pending == 0 {
                    return;
                }
                supportdesk::outbox::run_due(&state.jobs, &state.db, &state.clock).await;
            }
        }));
    }
    for worker in workers {
        worker.await.expect("worker");
    }
    assert_eq!(pending_deliveries(&app.state).await, 0, "all delivered");

    let hits = receiver.hits();
    let mut seen = HashSet::new();
    let mut delivered = HashSet::new();
    for hit in &hits {
        let id = hit.header("x-service-delivery").to_string();
        let attempt = hit.header("x-service-attempt").to_string();
        assert!(
            seen.insert((id.clone(), attempt.clone())),
            "attempt {attempt} of {id} sent twice"
        );
        delivered.insert(id);
    }
    assert_eq!(delivered.len(), EVENTS, "every event delivered");
    let attempts_logged: i64 = supportdesk::on_db!(&app.state.db, c => sqlx::query_scalar(
        "SELECT COUNT(*) FROM webhook_delivery_attempts")
        .fetch_one(c).await.expect("count"));
    assert_eq!(
        attempts_logged,
        hits.len() as i64,
        "one log row per request"
    );
}

async fn pending_deliveries(state: &supportdesk::AppState) -> i64 {
    supportdesk::on_db!(&state.db, c => sqlx::query_scalar(
        "SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending'")
        .fetch_one(c).await.expect("count"))
}
