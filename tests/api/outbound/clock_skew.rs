//! Nodes whose clocks disagree still agree on who holds a job: leases and
//! due times are read and written with the database's clock, not a node's.

use std::time::Duration;

use supportdesk::auth::Mode;

use super::support::{self, Receiver, Reply, create_user, create_webhook, tenant};
use crate::backend_tests;
use crate::support::{Backend, TestApp, eventually};

backend_tests!(a_node_with_a_fast_clock_does_not_claim_a_leased_delivery);

/// The receiver holds the first request this long, so the lease is held
/// while the other node polls.
const HELD_FOR: Duration = Duration::from_secs(3);

async fn a_node_with_a_fast_clock_does_not_claim_a_leased_delivery(backend: Backend) {
    // Lease: twice the 5 s timeout plus 5 s, well under the 30 s skew.
    let app = TestApp::spawn_with(backend, |c| {
        support::fast_retries(c);
        c.webhook_timeout = Duration::from_secs(5);
    })
    .await;
    let fast = app
        .spawn_peer_with(|c| c.clock_offset = chrono::TimeDelta::seconds(30))
        .await;
    let acme = app.company().await;
    let receiver = Receiver::start(|_| Reply::Slow(HELD_FOR, 200)).await;
    create_webhook(&app, &acme.key, &receiver.url("/"), &["user.created"]).await;
    create_user(&app, &tenant(&acme, Mode::Test), "Ada").await;

    let holder =
        supportdesk::outbox::start_due(&app.state.jobs, &app.state.db, &app.state.clock).await;
    assert_eq!(holder.claimed, 1, "the first node leases the delivery");
    let holding = tokio::spawn(holder.wait());
    // The other node tries to claim it, again and again, until the first
    // node's attempt has ended.
    eventually("the first node's attempt ends", async || {
        if holding.is_finished() {
            return true;
        }
        let started =
            supportdesk::outbox::start_due(&fast.state.jobs, &fast.state.db, &fast.state.clock)
                .await;
        assert_eq!(started.claimed, 0, "claimed while another node holds it");
        false
    })
    .await;
    holding.await.expect("first node's attempt");

    assert_eq!(
        supportdesk::outbox::run_due(&fast.state.jobs, &fast.state.db, &fast.state.clock).await,
        0
    );
    assert_eq!(receiver.count(), 1, "delivered exactly once");
}
