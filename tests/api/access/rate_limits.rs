//! Rate limits: headers on every authenticated response, the 429 and its
//! Retry-After, one budget across nodes over Redis, the local fallback when
//! Redis stops, and the per-IP limit on failed authentications.

use std::time::Duration;

use reqwest::Method;
use serde_json::json;
use supportdesk::auth::{Mode, Scope, ScopeSet, key};
use supportdesk::ratelimit::Limiter;
use uuid::Uuid;

use super::{assert_rate_headers, header_u64, key_id, send, spawn_slow_failure_window};
use crate::backend_tests;
use crate::postgres_tests;
use crate::support::{Backend, TestApp, TestResponse, eventually};

backend_tests!(
    rate_limit_headers_on_every_authenticated_response,
    the_request_over_the_limit_gets_429_with_retry_after,
    nodes_sharing_redis_share_one_budget,
    without_redis_the_service_keeps_serving_with_local_limits,
    failed_authentications_are_limited_per_ip,
);
postgres_tests!(
    concurrent_checks_on_one_redis_share_script_calls,
    checks_of_one_key_in_a_batch_allow_exactly_its_limit,
    three_nodes_at_once_allow_the_limit_less_at_most_their_unspent_slices,
    unspent_leased_requests_go_back_when_the_lease_ends,
    checks_within_a_lease_make_no_script_call,
);

// ---------------------------------------------------------------- rate limits

async fn rate_limit_headers_on_every_authenticated_response(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let no_users = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::all().without(Scope::UsersWrite),
        )
        .await;

    let first = app.get("/entities", key).await;
    first.assert_status(200);
    assert_rate_headers(&first, 1000);
    assert_eq!(header_u64(&first, "x-ratelimit-remaining"), 999);
    // One request costs 3600/1000 s of the allowance.
    assert_eq!(header_u64(&first, "x-ratelimit-reset"), 4);

    let responses = [
        app.get(&format!("/users/{}", Uuid::now_v7()), key).await,
        app.get("/no-such-route", key).await,
        app.delete("/users", key).await,
        app.post("/users", key, json!({"name": ""})).await,
        app.post("/users", &no_users, json!({})).await,
        app.post("/users", key, json!({"name": "A", "email": "a@acme.test"}))
            .await,
        app.post("/users", key, json!({"name": "A", "email": "a@acme.test"}))
            .await,
    ];
    let statuses: Vec<u16> = responses.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [404, 404, 405, 400, 403, 201, 409]);
    let mut previous = 999;
    for r in &responses {
        assert_rate_headers(r, 1000);
        if r.status != 403 {
            let remaining = header_u64(r, "x-ratelimit-remaining");
            assert!(remaining < previous, "{remaining} after {previous}");
            previous = remaining;
        }
    }
    // Unauthenticated responses carry none.
    let anonymous = send(&app, Method::GET, "/entities", None).await;
    assert!(anonymous.header("x-ratelimit-remaining").is_none());
}

async fn the_request_over_the_limit_gets_429_with_retry_after(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let five = app
        .key_with(acme.company.id, Mode::Test, ScopeSet::all(), 5)
        .await;
    for remaining in (0..5).rev() {
        let r = app.get("/entities", &five).await;
        r.assert_status(200);
        assert_eq!(header_u64(&r, "x-ratelimit-remaining"), remaining);
    }
    let refused = app.get("/entities", &five).await;
    refused.assert_error(429, "rate_limited");
    // One request is earned back every 3600/5 = 720 s.
    let retry = header_u64(&refused, "retry-after");
    assert!((700..=720).contains(&retry), "Retry-After {retry}");
    assert_eq!(
        refused.body["error"],
        format!("Rate limit exceeded. Try again in {retry} seconds.")
    );
    assert_rate_headers(&refused, 5);
    assert_eq!(header_u64(&refused, "x-ratelimit-remaining"), 0);
    let reset = header_u64(&refused, "x-ratelimit-reset");
    assert!((3500..=3600).contains(&reset), "Reset {reset}");
    // Another key of the company is not affected.
    app.get("/entities", &acme.key).await.assert_status(200);

    // With a short window the allowance comes back after Retry-After.
    let quick = TestApp::spawn_with(backend, |c| c.rate_window = Duration::from_secs(6)).await;
    let acme = quick.company().await;
    let two = quick
        .key_with(acme.company.id, Mode::Test, ScopeSet::all(), 2)
        .await;
    quick.get("/entities", &two).await.assert_status(200);
    quick.get("/entities", &two).await.assert_status(200);
    let refused = quick.get("/entities", &two).await;
    refused.assert_error(429, "rate_limited");
    // One request every 6/2 = 3 s.
    let retry = header_u64(&refused, "retry-after");
    assert!((1..=3).contains(&retry), "Retry-After {retry}");
    assert_eq!(
        refused.body["error"],
        format!("Rate limit exceeded. Try again in {retry} seconds.")
    );
    // Retry-After passes on the node's clock, which the limiter reads
    // (Redis's clock moved by as much on a shared limiter).
    quick.state.clock.advance(chrono::TimeDelta::seconds(
        i64::try_from(retry).expect("seconds"),
    ));
    eventually("the allowance came back", async || {
        quick.get("/entities", &two).await.status == 200
    })
    .await;
}

pub(crate) async fn nodes_sharing_redis_share_one_budget(backend: Backend) {
    let node_a = TestApp::spawn(backend).await;
    let node_b = node_a.spawn_peer().await;
    let acme = node_a.company().await;
    let four = node_a
        .key_with(acme.company.id, Mode::Test, ScopeSet::all(), 4)
        .await;
    let remaining = |r: &TestResponse| header_u64(r, "x-ratelimit-remaining");

    if node_a.config.redis_url.is_some() {
        assert_eq!(remaining(&node_a.get("/entities", &four).await), 3);
        assert_eq!(remaining(&node_b.get("/entities", &four).await), 2);
        assert_eq!(remaining(&node_a.get("/entities", &four).await), 1);
        assert_eq!(remaining(&node_b.get("/entities", &four).await), 0);
        node_a
            .get("/entities", &four)
            .await
            .assert_error(429, "rate_limited");
        node_b
            .get("/entities", &four)
            .await
            .assert_error(429, "rate_limited");
    } else {
        // Embedded mode is one node: without Redis each node counts alone.
        for _ in 0..4 {
            node_a.get("/entities", &four).await.assert_status(200);
        }
        node_a
            .get("/entities", &four)
            .await
            .assert_error(429, "rate_limited");
        assert_eq!(remaining(&node_b.get("/entities", &four).await), 3);
    }
}

/// A private `redis-server` on a free port, killed on drop.
struct PrivateRedis {
    child: std::process::Child,
    url: String,
}

impl PrivateRedis {
    /// None (with a notice) when redis-server is not installed, except in CI.
    async fn start() -> Option<PrivateRedis> {
        let installed = std::process::Command::new("redis-server")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !installed {
            assert!(
                !std::env::var("CI").is_ok_and(|v| v == "true"),
                "CI=true needs redis-server installed"
            );
            eprintln!("skipped: redis-server is not installed");
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .expect("free port")
            .local_addr()
            .expect("addr")
            .port();
        let child = std::process::Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("redis-server starts");
        let server = PrivateRedis {
            child,
            url: format!("redis://127.0.0.1:{port}"),
        };
        let client = redis::Client::open(server.url.as_str()).expect("client");
        eventually("private redis-server answers", async || {
            match client.get_multiplexed_async_connection().await {
                Ok(mut conn) => redis::cmd("PING")
                    .query_async::<String>(&mut conn)
                    .await
                    .is_ok(),
                Err(_) => false,
            }
        })
        .await;
        Some(server)
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        self.stop();
    }
}

async fn without_redis_the_service_keeps_serving_with_local_limits(backend: Backend) {
    let Some(mut redis_server) = PrivateRedis::start().await else {
        return;
    };
    let url = redis_server.url.clone();
    let app = TestApp::spawn_with(backend, move |c| {
        c.redis_url = Some(url);
        c.redis_prefix = format!("sdt:{}:", Uuid::new_v4().simple());
    })
    .await;
    let acme = app.company().await;
    let three = app
        .key_with(acme.company.id, Mode::Test, ScopeSet::all(), 3)
        .await;
    let id = key_id(&app, &three).await;

    // With Redis up, the bucket lives in Redis.
    let r = app.get("/entities", &three).await;
    r.assert_status(200);
    assert_eq!(header_u64(&r, "x-ratelimit-remaining"), 2);
    let bucket = app
        .state
        .access
        .limiter
        .redis()
        .expect("Redis limiter configured")
        .redis_key(&format!("key:{id}"));
    let client = redis::Client::open(redis_server.url.as_str()).expect("client");
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .expect("connect");
    let exists: bool = redis::cmd("EXISTS")
        .arg(&bucket)
        .query_async(&mut conn)
        .await
        .expect("exists");
    assert!(exists, "bucket {bucket} in Redis");

    // Redis goes away: requests are still served, still limited (locally).
    redis_server.stop();
    for remaining in (0..3).rev() {
        let r = app.get("/entities", &three).await;
        r.assert_status(200);
        assert_rate_headers(&r, 3);
        assert_eq!(header_u64(&r, "x-ratelimit-remaining"), remaining);
    }
    app.get("/entities", &three)
        .await
        .assert_error(429, "rate_limited");
    let other = app.get("/users", &acme.key).await;
    other.assert_status(200);
    assert_rate_headers(&other, 1000);
}

async fn failed_authentications_are_limited_per_ip(backend: Backend) {
    // An hour's window: the 100 failures cannot outlast it on a busy machine.
    let app = spawn_slow_failure_window(backend).await;
    let acme = app.company().await;
    for attempt in 0..100 {
        let guess = key::generate(Mode::Live);
        let r = send(&app, Method::GET, "/entities", Some(&guess)).await;
        assert_eq!(r.status, 401, "attempt {attempt}: {}", r.text);
    }
    let blocked = send(&app, Method::GET, "/entities", Some("svc_live_guess")).await;
    blocked.assert_error(429, "rate_limited");
    let retry = header_u64(&blocked, "retry-after");
    assert!((1..=60).contains(&retry), "Retry-After {retry}");
    assert_eq!(
        blocked.body["error"],
        format!("Rate limit exceeded. Try again in {retry} seconds.")
    );
    send(&app, Method::GET, "/entities", None)
        .await
        .assert_error(429, "rate_limited");
    // Another address is served.
    let other = reqwest::Client::builder()
        .local_address("127.0.0.2".parse::<std::net::IpAddr>().expect("address"))
        .build()
        .expect("client");
    let served = other
        .get(app.url("/api/v1/entities"))
        .header("X-API-Key", &acme.key)
        .send()
        .await
        .expect("sent");
    assert_eq!(served.status(), 200);
}

// ------------------------------------------------- batched checks on one Redis

/// A Postgres + Redis node for these tests, on a Redis key prefix of its own.
async fn redis_node(backend: Backend) -> TestApp {
    TestApp::spawn_with(backend, |c| {
        c.redis_prefix = format!("sdt:{}:", Uuid::new_v4().simple());
    })
    .await
}

/// Checks made at the same moment share script calls: 64 checks of 64
/// keys at once take fewer than 64 calls.
async fn concurrent_checks_on_one_redis_share_script_calls(backend: Backend) {
    let app = redis_node(backend).await;
    let limiter = app.state.access.limiter.redis().expect("Redis limiter");
    let before = limiter.script_calls();

    let checks =
        (0..64).map(|n| limiter.check_api_key(Uuid::from_u128(n), 1000, Duration::from_secs(3600)));
    let decisions = futures::future::join_all(checks).await;

    assert!(
        decisions
            .iter()
            .all(|d| d.as_ref().is_ok_and(|d| d.allowed))
    );
    assert!(
        limiter.script_calls() - before < 64,
        "{} calls",
        limiter.script_calls() - before
    );
}

/// Checks of one key batched together spend its allowance one by one: 64
/// checks at once of a limit of 10 allow exactly 10.
async fn checks_of_one_key_in_a_batch_allow_exactly_its_limit(backend: Backend) {
    let app = redis_node(backend).await;
    let limiter = app.state.access.limiter.redis().expect("Redis limiter");
    let key = Uuid::new_v4();

    let checks = (0..64).map(|_| limiter.check_api_key(key, 10, Duration::from_secs(3600)));
    let decisions = futures::future::join_all(checks).await;

    let allowed = decisions
        .iter()
        .filter(|d| d.as_ref().is_ok_and(|d| d.allowed))
        .count();
    assert_eq!(allowed, 10);
}

/// Three nodes on one Redis never allow more than the limit: 1,200
/// checks at once, 400 on each node, of a limit of 1,000 an hour. Each
/// node may end holding a leased slice it did not spend (10 requests, one
/// of them its own), so at least 1,000 − 3 × 9 are allowed.
async fn three_nodes_at_once_allow_the_limit_less_at_most_their_unspent_slices(backend: Backend) {
    let node_a = redis_node(backend).await;
    let node_b = node_a.spawn_peer().await;
    let node_c = node_a.spawn_peer().await;
    let key = Uuid::new_v4();
    let hour = Duration::from_secs(3600);

    let checks = [&node_a, &node_b, &node_c].into_iter().flat_map(|node| {
        let limiter = node.state.access.limiter.redis().expect("Redis limiter");
        (0..400).map(move |_| limiter.check_api_key(key, 1000, hour))
    });
    let decisions = futures::future::join_all(checks).await;

    let allowed = decisions
        .iter()
        .filter(|d| d.as_ref().expect("Redis answers").allowed)
        .count();
    assert!((973..=1000).contains(&allowed), "{allowed} allowed");
}

/// What a node leased and did not spend goes back to Redis when its lease
/// ends: node A spends 1 of a 10-request slice of a limit of 1,000 (per ten
/// hours, so time earns nothing back during the test); node B then gets
/// the other 990, and the 9 A held once A's lease has ended.
async fn unspent_leased_requests_go_back_when_the_lease_ends(backend: Backend) {
    let node_a = redis_node(backend).await;
    let node_b = node_a.spawn_peer().await;
    let limiter_a = node_a.state.access.limiter.redis().expect("Redis limiter");
    let limiter_b = node_b.state.access.limiter.redis().expect("Redis limiter");
    let key = Uuid::new_v4();
    let ten_hours = Duration::from_secs(36_000);
    let allowed_on_b = async |checks: usize| {
        let decisions = futures::future::join_all(
            (0..checks).map(|_| limiter_b.check_api_key(key, 1000, ten_hours)),
        )
        .await;
        decisions
            .iter()
            .filter(|d| d.as_ref().expect("Redis answers").allowed)
            .count()
    };

    let first = limiter_a.check_api_key(key, 1000, ten_hours).await;
    assert!(first.expect("Redis answers").allowed);
    assert_eq!(allowed_on_b(1000).await, 990);
    // A's lease ends by A's clock; B's leases end with it, as time would
    // end them. A gives its unspent requests back at its next return.
    let given_back = limiter_a.give_backs();
    let lifetime = chrono::TimeDelta::from_std(supportdesk::ratelimit::lease::LIFETIME)
        .expect("a short lifetime");
    node_a.state.clock.advance(lifetime);
    node_b.state.clock.advance(lifetime);
    eventually("A gave back its unspent requests", async || {
        limiter_a.give_backs() > given_back
    })
    .await;

    assert_eq!(allowed_on_b(20).await, 9);
}

/// Checks of a busy key are decided from the node's lease: 200 checks one
/// after another of a limit of 100,000 (a slice of 1,000) take one script
/// call, or a few should a lease end during the test.
async fn checks_within_a_lease_make_no_script_call(backend: Backend) {
    let app = redis_node(backend).await;
    let limiter = app.state.access.limiter.redis().expect("Redis limiter");
    let key = Uuid::new_v4();
    let before = limiter.script_calls();

    for _ in 0..200 {
        let decision = limiter
            .check_api_key(key, 100_000, Duration::from_secs(3600))
            .await;
        assert!(decision.expect("Redis answers").allowed);
    }

    let calls = limiter.script_calls() - before;
    assert!(calls < 10, "{calls} script calls");
}
