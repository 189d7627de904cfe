//! Authentication outcomes and their order, scopes on every route, the key
//! cache (changes and revocations seen at once, on every node) and lastUsedAt.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::time::Duration;

use reqwest::Method;
use serde_json::json;
use supportdesk::auth::{Mode, Scope, ScopeSet, key};
use supportdesk::keys::NewKey;
use supportdesk::time::Timestamp;
use uuid::Uuid;

use super::{assert_message, header_u64, key_id, send};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestResponse, eventually, eventually_within};

backend_tests!(
    every_authentication_outcome,
    checks_run_in_the_documented_order,
    a_bad_checksum_is_refused_without_a_database_lookup,
    every_route_refuses_a_key_without_its_scope,
    key_changes_take_effect_at_once,
    revoking_on_one_node_refuses_on_every_node,
    last_used_at_is_written_at_most_once_a_minute,
    a_stored_scope_this_build_does_not_know_is_ignored,
);

// ---------------------------------------------------------- authentication

async fn every_authentication_outcome(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;

    // Header missing, or empty.
    let missing = send(&app, Method::GET, "/entities", None).await;
    assert_message(
        &missing,
        401,
        "missing_api_key",
        "X-API-Key header is required",
    );
    assert!(missing.header("x-ratelimit-limit").is_none());
    let empty = send(&app, Method::GET, "/entities", Some("  ")).await;
    assert_message(
        &empty,
        401,
        "missing_api_key",
        "X-API-Key header is required",
    );

    // Invalid: garbage, a typo (bad checksum), a well-formed unknown key.
    let mut typo = acme.key.clone().into_bytes();
    typo[20] = if typo[20] == b'x' { b'y' } else { b'x' };
    let typo = String::from_utf8(typo).expect("ascii");
    for invalid in ["nope", typo.as_str(), &key::generate(Mode::Test)] {
        let r = send(&app, Method::GET, "/entities", Some(invalid)).await;
        assert_message(&r, 401, "invalid_api_key", "Invalid API key");
    }

    // Expired.
    let (_, expired) = supportdesk::keys::store::create(
        &app.state.db,
        NewKey {
            company_id: acme.company.id,
            name: "old".into(),
            mode: Mode::Test,
            scopes: ScopeSet::all(),
            rate_limit: 1000,
            expires_at: Some(Timestamp::from_datetime(
                chrono::Utc::now() - chrono::Duration::hours(1),
            )),
        },
        app.state.clock.now(),
    )
    .await
    .expect("expired key");
    let r = app.get("/entities", &expired).await;
    assert_message(&r, 401, "expired_api_key", "API key has expired");

    // Deactivated, then revoked, through the API.
    let victim = app.key(acme.company.id, Mode::Test, ScopeSet::all()).await;
    app.get("/entities", &victim).await.assert_status(200);
    let victim_id = key_id(&app, &victim).await;
    app.patch(
        &format!("/api-keys/{victim_id}"),
        &acme.key,
        json!({"isActive": false}),
    )
    .await
    .assert_status(200);
    let r = app.get("/entities", &victim).await;
    assert_message(&r, 401, "invalid_api_key", "API key is inactive");
    app.delete(&format!("/api-keys/{victim_id}"), &acme.key)
        .await
        .assert_status(204);
    let r = app.get("/entities", &victim).await;
    assert_message(&r, 401, "invalid_api_key", "Invalid API key");

    // Valid but lacking the scope.
    let reader = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::all().without(Scope::EntitiesRead),
        )
        .await;
    let r = app.get("/entities", &reader).await;
    assert_message(
        &r,
        403,
        "insufficient_scope",
        "Missing required permission: entities:read",
    );

    // Rate limit exceeded.
    let one = app
        .key_with(acme.company.id, Mode::Test, ScopeSet::all(), 1)
        .await;
    app.get("/entities", &one).await.assert_status(200);
    app.get("/entities", &one)
        .await
        .assert_error(429, "rate_limited");

    // Suspended company (a fresh key, and one already in the cache once the
    // suspension is announced).
    app.get("/entities", &acme.key).await.assert_status(200);
    app.set_suspended(acme.company.id, true).await;
    let fresh = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    for key in [&acme.key, &fresh] {
        let r = app.get("/entities", key).await;
        assert_message(&r, 403, "account_suspended", "Account is suspended");
    }
    app.set_suspended(acme.company.id, false).await;
    app.get("/entities", &acme.key).await.assert_status(200);
}

async fn checks_run_in_the_documented_order(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let company = acme.company.id;

    // 401 before routing.
    send(&app, Method::GET, "/no-such-route", Some("nope"))
        .await
        .assert_error(401, "invalid_api_key");

    // Rate limit (429) before routing (404) and before scope (403).
    let spent = app
        .key_with(company, Mode::Test, ScopeSet::empty(), 1)
        .await;
    app.get("/no-such-route", &spent)
        .await
        .assert_error(404, "not_found");
    app.get("/no-such-route", &spent)
        .await
        .assert_error(429, "rate_limited");
    app.get("/users", &spent)
        .await
        .assert_error(429, "rate_limited");

    // Route (404/405) before scope; scope (403) before input (400); input
    // before resource (404).
    let none = app.key(company, Mode::Test, ScopeSet::empty()).await;
    app.get("/no-such-route", &none)
        .await
        .assert_error(404, "not_found");
    app.delete("/users", &none)
        .await
        .assert_error(405, "method_not_allowed");
    app.post("/users", &none, json!({"name": 42}))
        .await
        .assert_error(403, "insufficient_scope");
    let missing_user = format!("/users/{}", Uuid::now_v7());
    app.patch(&missing_user, &acme.key, json!({"email": "bad"}))
        .await
        .assert_error(400, "validation_failed");
    app.patch(&missing_user, &acme.key, json!({"name": "Ok"}))
        .await
        .assert_error(404, "not_found");

    // Suspension (403) comes before the rate limit.
    supportdesk::companies::store::set_suspended(
        &app.state.db,
        company,
        true,
        app.state.clock.now(),
    )
    .await
    .expect("suspend");
    let fresh = app.key_with(company, Mode::Test, ScopeSet::all(), 1).await;
    for _ in 0..3 {
        app.get("/entities", &fresh)
            .await
            .assert_error(403, "account_suspended");
    }
}

async fn a_bad_checksum_is_refused_without_a_database_lookup(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let mut typo = acme.key.clone().into_bytes();
    typo[15] = if typo[15] == b'Q' { b'R' } else { b'Q' };
    let typo = String::from_utf8(typo).expect("ascii");

    // With the store gone, a key that needs a lookup cannot be checked...
    app.state.db.close().await;
    let unknown = key::generate(Mode::Test);
    send(&app, Method::GET, "/entities", Some(&unknown))
        .await
        .assert_error(503, "unavailable");
    // ...but a typo is still refused: it never reached the store.
    let r = send(&app, Method::GET, "/entities", Some(&typo)).await;
    assert_message(&r, 401, "invalid_api_key", "Invalid API key");
}

async fn every_route_refuses_a_key_without_its_scope(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let specs = supportdesk::app::api_route_specs();
    assert!(specs.len() >= 13, "the access routes at least: {specs:?}");
    let mut keys: HashMap<Scope, String> = HashMap::new();
    for spec in &specs {
        if let Entry::Vacant(slot) = keys.entry(spec.scope) {
            let all_but = ScopeSet::all().without(spec.scope);
            slot.insert(app.key(acme.company.id, Mode::Test, all_but).await);
        }
        let key = &keys[&spec.scope];
        let path: String = spec
            .path
            .split('/')
            .map(|segment| {
                if segment.starts_with('{') {
                    Uuid::now_v7().to_string()
                } else {
                    segment.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("/");
        let method = Method::from_bytes(spec.method.as_str().as_bytes()).expect("method");
        let mut request = app.api(method.clone(), &path, Some(key));
        if [Method::POST, Method::PUT, Method::PATCH].contains(&method) {
            request = request.json(&json!({}));
        }
        let r = TestResponse::from(request.send().await).await;
        assert_eq!(
            (r.status, r.body["code"].as_str(), r.body["error"].as_str()),
            (
                403,
                Some("insufficient_scope"),
                Some(format!("Missing required permission: {}", spec.scope).as_str())
            ),
            "{} {} without {}: {}",
            spec.method,
            spec.path,
            spec.scope,
            r.text
        );
    }
    // The access routes use the scopes docs/api.md lists.
    let scope_of = |method: &str, path: &str| {
        specs
            .iter()
            .find(|s| s.method.as_str() == method && s.path == path)
            .map(|s| s.scope)
    };
    for (method, path, scope) in [
        ("GET", "/users", Scope::UsersRead),
        ("POST", "/users", Scope::UsersWrite),
        ("GET", "/users/{id}", Scope::UsersRead),
        ("PATCH", "/users/{id}", Scope::UsersWrite),
        ("GET", "/entities", Scope::EntitiesRead),
        ("POST", "/entities", Scope::EntitiesWrite),
        ("GET", "/entities/{id}", Scope::EntitiesRead),
        ("PATCH", "/entities/{id}", Scope::EntitiesWrite),
        ("GET", "/api-keys", Scope::ApiKeysRead),
        ("POST", "/api-keys", Scope::ApiKeysWrite),
        ("GET", "/api-keys/{id}", Scope::ApiKeysRead),
        ("PATCH", "/api-keys/{id}", Scope::ApiKeysWrite),
        ("DELETE", "/api-keys/{id}", Scope::ApiKeysWrite),
    ] {
        assert_eq!(scope_of(method, path), Some(scope), "{method} {path}");
    }
}

// ------------------------------------------------------- cache and lastUsed

async fn key_changes_take_effect_at_once(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let created = app
        .post(
            "/api-keys",
            &acme.key,
            json!({"name": "svc", "scopes": ["entities:read", "users:read"], "rateLimit": 7}),
        )
        .await;
    let created = created.assert_status(201).clone();
    let secret = created["key"].as_str().expect("key").to_string();
    let path = format!("/api-keys/{}", created["id"].as_str().expect("id"));

    // Cached by the first request; every change is seen by the next one.
    let r = app.get("/entities", &secret).await;
    r.assert_status(200);
    assert_eq!(header_u64(&r, "x-ratelimit-limit"), 7);
    app.patch(
        &path,
        &acme.key,
        json!({"scopes": ["users:read"], "rateLimit": 9}),
    )
    .await
    .assert_status(200);
    let r = app.get("/entities", &secret).await;
    assert_message(
        &r,
        403,
        "insufficient_scope",
        "Missing required permission: entities:read",
    );
    assert_eq!(header_u64(&r, "x-ratelimit-limit"), 9);
    app.patch(&path, &acme.key, json!({"isActive": false}))
        .await
        .assert_status(200);
    assert_message(
        &app.get("/users", &secret).await,
        401,
        "invalid_api_key",
        "API key is inactive",
    );
    app.patch(&path, &acme.key, json!({"isActive": true}))
        .await
        .assert_status(200);
    app.get("/users", &secret).await.assert_status(200);
}

async fn revoking_on_one_node_refuses_on_every_node(backend: Backend) {
    let node_a = TestApp::spawn(backend).await;
    let acme = node_a.company().await;
    let victim = node_a
        .key(acme.company.id, Mode::Test, ScopeSet::all())
        .await;
    let path = format!("/api-keys/{}", key_id(&node_a, &victim).await);

    if node_a.config.redis_url.is_none() {
        // One node without Redis: the bus is in-process.
        node_a.get("/entities", &victim).await.assert_status(200);
        node_a.delete(&path, &acme.key).await.assert_status(204);
        node_a
            .get("/entities", &victim)
            .await
            .assert_error(401, "invalid_api_key");
        return;
    }

    let node_b = node_a.spawn_peer().await;
    // Both nodes have the key cached (valid for 10 s without invalidation).
    node_a.get("/entities", &victim).await.assert_status(200);
    node_b.get("/entities", &victim).await.assert_status(200);
    node_b.get("/users", &victim).await.assert_status(200);
    node_a.delete(&path, &acme.key).await.assert_status(204);
    node_a
        .get("/entities", &victim)
        .await
        .assert_error(401, "invalid_api_key");
    // Node B learns it over the bus: long before its cache entry expires.
    eventually_within(
        "node B refuses the revoked key",
        Duration::from_secs(5),
        async || node_b.get("/entities", &victim).await.status == 401,
    )
    .await;
    node_b
        .get("/users", &victim)
        .await
        .assert_error(401, "invalid_api_key");
}

async fn last_used_at_is_written_at_most_once_a_minute(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let hash = key::hash(&acme.key);
    let last_used = async || {
        supportdesk::keys::store::find_for_auth(&app.state.db, &hash)
            .await
            .expect("lookup")
            .expect("key")
            .last_used_at
    };
    assert_eq!(last_used().await, None);
    app.get("/entities", &acme.key).await.assert_status(200);
    eventually("lastUsedAt recorded", async || last_used().await.is_some()).await;
    let first = last_used().await;

    // More requests, on this node and on a second one: no further write.
    for _ in 0..5 {
        app.get("/entities", &acme.key).await.assert_status(200);
    }
    let peer = app.spawn_peer().await;
    peer.get("/entities", &acme.key).await.assert_status(200);
    // The peer has not written the key yet itself, so it tries; the write
    // skips a key touched within the minute. Wait for that write to end.
    eventually("the peer's lastUsedAt write ended", async || {
        peer.state.access.last_used_writes() == 1
    })
    .await;
    assert_eq!(last_used().await, first);
    let shown = app.get("/api-keys", &acme.key).await;
    assert_eq!(
        shown.body["data"][0]["lastUsedAt"],
        serde_json::to_value(first).expect("json")
    );
}

// ---------------------------------------------------------- damaged rows

/// A key written by a newer build (during a rolling deploy that adds a
/// scope) keeps working on this one with the scopes this build knows.
async fn a_stored_scope_this_build_does_not_know_is_ignored(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let limited = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::from_scopes([Scope::TicketsRead]),
        )
        .await;
    let id = key_id(&app, &limited).await;
    supportdesk::on_db!(&app.state.db, c => sqlx::query(
        "UPDATE api_keys SET scopes = 'tickets:read gone:away' WHERE id = $1")
        .bind(id).execute(c).await.expect("write a newer build's scope").rows_affected());

    send(&app, Method::GET, "/tickets", Some(&limited))
        .await
        .assert_status(200);
    let listed = app.get(&format!("/api-keys/{id}"), &acme.key).await;
    assert_eq!(listed.assert_status(200)["scopes"], json!(["tickets:read"]));
}
