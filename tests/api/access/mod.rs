//! Access: API-key authentication (every outcome, in order), scopes on every
//! route, TEST/LIVE and company isolation, the key cache and its
//! invalidation across nodes, rate limits (headers, 429, shared budget over
//! Redis, local fallback), brute-force costs (the per-client failure limit
//! before any lookup, unknown keys remembered), and the users, entities and
//! api-keys endpoints.

mod authentication;
mod brute_force;
mod challenges;
mod endpoints;
mod expiry;
mod isolation;
mod managing_keys;
pub(crate) mod rate_limits;

use std::time::Duration;

use reqwest::Method;
use supportdesk::auth::key;
use uuid::Uuid;

use crate::support::{Backend, TestApp, TestResponse};

// ---------------------------------------------------------------- helpers

/// A request with `key` given verbatim (or no header at all).
pub(super) async fn send(
    app: &TestApp,
    method: Method,
    path: &str,
    key: Option<&str>,
) -> TestResponse {
    TestResponse::from(app.api(method, path, key).send().await).await
}

#[track_caller]
pub(super) fn assert_message(response: &TestResponse, status: u16, code: &str, message: &str) {
    response.assert_error(status, code);
    assert_eq!(
        response.body["error"], message,
        "message of {}",
        response.text
    );
}

/// The stored id of a key value.
pub(super) async fn key_id(app: &TestApp, key: &str) -> Uuid {
    supportdesk::keys::store::find_for_auth(&app.state.db, &key::hash(key))
        .await
        .expect("lookup")
        .expect("key exists")
        .id
}

pub(super) fn header_u64(response: &TestResponse, name: &str) -> u64 {
    response
        .header(name)
        .unwrap_or_else(|| panic!("{name} missing on {} {}", response.status, response.text))
        .parse()
        .unwrap_or_else(|_| panic!("{name} is not a number"))
}

#[track_caller]
pub(super) fn assert_rate_headers(response: &TestResponse, limit: u64) {
    assert_eq!(header_u64(response, "x-ratelimit-limit"), limit);
    let remaining = header_u64(response, "x-ratelimit-remaining");
    let reset = header_u64(response, "x-ratelimit-reset");
    assert_eq!(
        response.header("ratelimit-policy"),
        Some(format!("\"default\";q={limit};w=3600").as_str())
    );
    assert_eq!(
        response.header("ratelimit"),
        Some(format!("\"default\";r={remaining};t={reset}").as_str())
    );
}

pub(super) async fn count_events(app: &TestApp, company: Uuid, name: &str) -> i64 {
    supportdesk::on_db!(&app.state.db, c => sqlx::query_scalar::<_, i64>(
        "SELECT COUNT(*) FROM events WHERE company_id = $1 AND name = $2")
        .bind(company).bind(name).fetch_one(c).await.expect("count events"))
}

pub(super) async fn count_users(app: &TestApp, company: Uuid) -> i64 {
    supportdesk::on_db!(&app.state.db, c => sqlx::query_scalar::<_, i64>(
        "SELECT COUNT(*) FROM users WHERE company_id = $1")
        .bind(company).fetch_one(c).await.expect("count users"))
}

/// A node whose failure window is an hour: a refused client stays refused
/// for 36 s (one failure is earned back every 3600/100 s), long enough to
/// look at without racing the clock.
pub(super) async fn spawn_slow_failure_window(backend: Backend) -> TestApp {
    TestApp::spawn_with(backend, |c| {
        c.auth_failure_window = Duration::from_secs(3600)
    })
    .await
}
