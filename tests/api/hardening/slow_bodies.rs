//! Request bodies sent too slowly: one that stalls past the idle timeout,
//! and one trickled past the deadline, are answered 408 `request_timeout`
//! (their handler's failed read is not what the client is told), and the
//! service does not wait for the rest.

use std::time::Duration;

use crate::backend_tests;
use crate::support::{Backend, TestApp, post_unfinished_body};

backend_tests!(
    a_body_that_stalls_is_answered_408,
    a_body_trickled_past_the_deadline_is_answered_408,
);

async fn service(backend: Backend, idle: u64, whole: u64) -> (TestApp, String) {
    let app = TestApp::spawn_with(backend, |c| {
        c.body_read_timeout = Duration::from_secs(idle);
        c.body_read_deadline = Duration::from_secs(whole);
    })
    .await;
    let key = app.company().await.key;
    (app, key)
}

/// 10 bytes of a 100-byte body, then nothing.
async fn a_body_that_stalls_is_answered_408(backend: Backend) {
    let (app, key) = service(backend, 1, 600).await;
    let headers = [
        ("X-API-Key", key.as_str()),
        ("Content-Type", "application/json"),
    ];
    let sent = vec![br#"{"subject""#.to_vec()];
    let r =
        post_unfinished_body(&app, "/api/v1/tickets", &headers, 100, sent, Duration::ZERO).await;
    r.assert_error(408, "request_timeout");
}

/// A byte every 200 ms never stalls for the 5 s idle timeout; the 2 s
/// deadline ends it.
async fn a_body_trickled_past_the_deadline_is_answered_408(backend: Backend) {
    let (app, key) = service(backend, 5, 2).await;
    let headers = [
        ("X-API-Key", key.as_str()),
        ("Content-Type", "application/json"),
    ];
    // 40 s of trickle: past the 30 s the test waits, were there no deadline.
    let sent = vec![b" ".to_vec(); 200];
    let pause = Duration::from_millis(200);
    let r = post_unfinished_body(&app, "/api/v1/tickets", &headers, 1000, sent, pause).await;
    r.assert_error(408, "request_timeout");
}
