//! Guessing keys costs no database work: a client over the failed-
//! authentication limit is refused before any key lookup (REST and socket
//! handshakes alike, an IPv6 client by its /64) except of keys the node has
//! served, and a digest that matched no key is remembered, so repeating it
//! costs no query.

use std::net::IpAddr;
use std::time::Duration;

use reqwest::Method;
use serde_json::json;
use supportdesk::auth::access::FAILURE_LIMIT;
use supportdesk::auth::{Mode, ScopeSet, key};

use super::{key_id, send, spawn_slow_failure_window};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestResponse, eventually_within};

backend_tests!(
    a_blocked_client_is_refused_before_any_key_lookup,
    failed_socket_handshakes_count_per_client,
    unknown_keys_cost_one_store_lookup_each,
    a_created_key_is_forgotten_as_unknown_on_every_node,
    ipv6_clients_share_the_failure_limit_per_64,
);

/// A client whose connections come from `address` (any 127.0.0.0/8
/// address reaches the server on loopback).
fn client_from(address: &str) -> reqwest::Client {
    let address: IpAddr = address.parse().expect("an address");
    reqwest::Client::builder()
        .local_address(address)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

async fn get_from(app: &TestApp, client: &reqwest::Client, key: &str) -> TestResponse {
    TestResponse::from(
        client
            .get(app.url("/api/v1/entities"))
            .header("X-API-Key", key)
            .send()
            .await,
    )
    .await
}

fn lookups(app: &TestApp) -> u64 {
    app.state.access.keys.store_lookups()
}

async fn a_blocked_client_is_refused_before_any_key_lookup(backend: Backend) {
    let app = spawn_slow_failure_window(backend).await;
    let acme = app.company().await;
    app.get("/entities", &acme.key).await.assert_status(200);
    for _ in 0..FAILURE_LIMIT {
        let r = send(
            &app,
            Method::GET,
            "/entities",
            Some(&key::generate(Mode::Live)),
        )
        .await;
        r.assert_error(401, "invalid_api_key");
    }
    send(
        &app,
        Method::GET,
        "/entities",
        Some(&key::generate(Mode::Live)),
    )
    .await
    .assert_error(429, "rate_limited");
    let before = lookups(&app);
    for _ in 0..50 {
        let r = send(
            &app,
            Method::GET,
            "/entities",
            Some(&key::generate(Mode::Live)),
        )
        .await;
        r.assert_error(429, "rate_limited");
    }
    assert_eq!(lookups(&app), before, "no key was looked up");
    // A key this node has served keeps working from that address; one it
    // has not seen waits like a guess; another address is served.
    app.get("/entities", &acme.key).await.assert_status(200);
    let unseen = app.key(acme.company.id, Mode::Test, ScopeSet::all()).await;
    app.get("/entities", &unseen)
        .await
        .assert_error(429, "rate_limited");
    let other = client_from("127.0.0.2");
    get_from(&app, &other, &unseen).await.assert_status(200);
}

async fn failed_socket_handshakes_count_per_client(backend: Backend) {
    let app = spawn_slow_failure_window(backend).await;
    let acme = app.company().await;
    let mut statuses = Vec::new();
    for n in 0..200 {
        // Bad keys and forged tokens alike.
        let request = if n % 2 == 0 {
            app.client
                .get(app.url("/api/v1/ws"))
                .header("X-API-Key", key::generate(Mode::Test))
        } else {
            app.client.get(app.url("/api/v1/ws?token=st_forged"))
        };
        statuses.push(TestResponse::from(request.send().await).await.status);
    }
    let expected: Vec<u16> = std::iter::repeat_n(401, 100)
        .chain(std::iter::repeat_n(429, 100))
        .collect();
    assert_eq!(statuses, expected);
    // REST shares the count.
    let r = app.get("/entities", &acme.key).await;
    r.assert_error(429, "rate_limited");
    // Another client is not affected.
    let other = client_from("127.0.0.2");
    get_from(&app, &other, &acme.key).await.assert_status(200);
}

async fn unknown_keys_cost_one_store_lookup_each(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let guesses: Vec<String> = (0..1000).map(|_| key::generate(Mode::Live)).collect();
    // 40 clients, 25 guesses each per round: well within the failure limit.
    let clients: Vec<reqwest::Client> = (0..40)
        .map(|n| client_from(&format!("127.0.1.{}", n + 1)))
        .collect();
    let round = async || {
        let mut tasks = tokio::task::JoinSet::new();
        for (n, client) in clients.iter().enumerate() {
            let client = client.clone();
            let url = app.url("/api/v1/entities");
            let mine: Vec<String> = guesses.iter().skip(n).step_by(40).cloned().collect();
            tasks.spawn(async move {
                for guess in mine {
                    let r = client.get(&url).header("X-API-Key", guess).send().await;
                    assert_eq!(r.expect("sent").status(), 401);
                }
            });
        }
        while let Some(done) = tasks.join_next().await {
            done.expect("a client finished");
        }
    };
    let start = lookups(&app);
    round().await;
    let first = lookups(&app) - start;
    assert!(first <= 1000, "{first} lookups for 1000 distinct keys");
    round().await;
    assert_eq!(lookups(&app) - start, first, "repeated keys cost no lookup");
}

async fn a_created_key_is_forgotten_as_unknown_on_every_node(backend: Backend) {
    let node_a = TestApp::spawn(backend).await;
    // Without Redis the bus is in-process: one node.
    let node_b = match node_a.config.redis_url {
        Some(_) => Some(node_a.spawn_peer().await),
        None => None,
    };
    let nodes: Vec<&TestApp> = std::iter::once(&node_a).chain(node_b.as_ref()).collect();
    let acme = node_a.company().await;
    // A value nobody holds yet is presented on every node and remembered.
    let future = key::generate(Mode::Test);
    for node in &nodes {
        node.get("/entities", &future)
            .await
            .assert_error(401, "invalid_api_key");
        assert!(node.state.access.keys.is_unknown(&key::digest(&future)));
    }
    // It comes to exist (the store rewritten under the nodes' feet)...
    let holder = node_a
        .key(acme.company.id, Mode::Test, ScopeSet::all())
        .await;
    let holder_id = key_id(&node_a, &holder).await;
    supportdesk::on_db!(&node_a.state.db, c => sqlx::query(
        "UPDATE api_keys SET key_hash = $1 WHERE id = $2")
        .bind(key::hash(&future)).bind(holder_id).execute(c).await.map(|_| ()).expect("rehash"));
    // ...and a key created through the API on node A makes every node forget.
    let created = node_a
        .post(
            "/api-keys",
            &acme.key,
            json!({"name": "new", "scopes": ["chat:read"]}),
        )
        .await;
    let new_key = created.assert_status(201)["key"]
        .as_str()
        .expect("key")
        .to_string();
    node_a.get("/entities", &future).await.assert_status(200);
    if let Some(node_b) = &node_b {
        // Node B hears of it on the bus (Redis pub/sub), within moments.
        eventually_within(
            "node B forgets the digest",
            Duration::from_secs(5),
            async || node_b.get("/entities", &future).await.status == 200,
        )
        .await;
        // The new key itself works at once on the other node.
        node_b
            .get("/chat/sessions", &new_key)
            .await
            .assert_status(200);
    }
}

async fn ipv6_clients_share_the_failure_limit_per_64(backend: Backend) {
    let app = spawn_slow_failure_window(backend).await;
    let access = &app.state.access;
    let first: IpAddr = "2001:db8:7:1::10".parse().expect("address");
    let neighbour: IpAddr = "2001:db8:7:1:ffff::99".parse().expect("address");
    let elsewhere: IpAddr = "2001:db8:7:2::10".parse().expect("address");
    for _ in 0..FAILURE_LIMIT {
        assert!(access.note_failure(Some(first)).await.is_none());
    }
    let refused = access.note_failure(Some(neighbour)).await;
    assert_eq!(refused.map(|e| e.code.as_str()), Some("rate_limited"));
    assert!(access.refusal_for(Some(first)).is_some());
    assert!(access.refusal_for(Some(elsewhere)).is_none());
    assert!(access.note_failure(Some(elsewhere)).await.is_none());
}
