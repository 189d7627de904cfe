//! The outbox's lease queue, driven through its store: a claim's lease is
//! its token, so a worker whose lease lapsed and was re-claimed cannot end
//! the attempt any more.

use std::time::Duration;

use serde_json::json;
use supportdesk::outbox::{self, JobStatus, store};

use super::support;
use crate::backend_tests;
use crate::support::{Backend, TestApp, eventually};

backend_tests!(
    a_lapsed_lease_cannot_finish_the_job,
    a_leased_job_is_not_claimed_twice,
    a_retried_job_is_due_again_at_its_time,
);

/// A job of a kind no handler runs, so only the test touches it.
const KIND: &str = "test.queue";

async fn enqueue(app: &TestApp) -> uuid::Uuid {
    let mut tx = app.state.db.begin().await.expect("begin");
    let id = outbox::enqueue(&mut tx, KIND, None, &json!({}))
        .await
        .expect("enqueued");
    tx.commit().await.expect("commit");
    id
}

async fn claim(app: &TestApp, lease: Duration) -> Vec<outbox::Job> {
    store::claim(&app.state.db, KIND, lease, 10)
        .await
        .expect("claim")
}

async fn a_lapsed_lease_cannot_finish_the_job(backend: Backend) {
    let app = TestApp::spawn_with(backend, support::fast_retries).await;
    let id = enqueue(&app).await;
    let first = claim(&app, Duration::from_millis(1)).await;
    // The lease is read with the database's clock, which a test cannot move
    // forward: wait for the lapse itself.
    let second = eventually("the lapsed job is claimed again", async || {
        let claimed = claim(&app, Duration::from_secs(60)).await;
        (!claimed.is_empty()).then_some(claimed)
    })
    .await;
    assert_eq!(second.len(), 1, "the lapsed job is claimed again");

    let mut tx = app.state.db.begin().await.expect("begin");
    let held = store::finish(&mut tx, &first[0]).await.expect("finish");
    tx.commit().await.expect("commit");
    assert!(!held, "the first claim lost its lease");

    let state = store::state(&app.state.db, id).await.expect("state");
    assert_eq!(state.status, JobStatus::Pending);
}

async fn a_leased_job_is_not_claimed_twice(backend: Backend) {
    let app = TestApp::spawn_with(backend, support::fast_retries).await;
    enqueue(&app).await;
    assert_eq!(claim(&app, Duration::from_secs(60)).await.len(), 1);
    assert!(claim(&app, Duration::from_secs(60)).await.is_empty());
}

async fn a_retried_job_is_due_again_at_its_time(backend: Backend) {
    let app = TestApp::spawn_with(backend, support::fast_retries).await;
    let id = enqueue(&app).await;
    let job = claim(&app, Duration::from_secs(60)).await.remove(0);
    let mut tx = app.state.db.begin().await.expect("begin");
    let due = store::retry(&mut tx, &job, Duration::from_millis(200), "try later")
        .await
        .expect("retry");
    tx.commit().await.expect("commit");
    assert!(due.is_some());

    assert!(claim(&app, Duration::from_secs(60)).await.is_empty());
    // Due by the database's clock, which a test cannot move forward: wait
    // for the due time itself.
    let again = eventually("the retried job is due again", async || {
        let claimed = claim(&app, Duration::from_secs(60)).await;
        (!claimed.is_empty()).then_some(claimed)
    })
    .await;
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].id, id);
    assert_eq!(again[0].attempts, 1, "the failed attempt counts");
}
