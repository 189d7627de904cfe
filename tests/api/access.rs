//! Access: API-key authentication (every outcome, in order), scopes on every
//! route, TEST/LIVE and company isolation, the key cache and its
//! invalidation across nodes, rate limits (headers, 429, shared budget over
//! Redis, local fallback), and the users, entities and api-keys endpoints.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use supportdesk::auth::{Mode, Scope, ScopeSet, key};
use supportdesk::keys::NewKey;
use supportdesk::time::Timestamp;
use uuid::Uuid;

use crate::backend_tests;
use crate::support::{Backend, TestApp, TestResponse};

backend_tests!(
    every_authentication_outcome,
    checks_run_in_the_documented_order,
    a_bad_checksum_is_refused_without_a_database_lookup,
    every_route_refuses_a_key_without_its_scope,
    modes_and_companies_are_isolated,
    users_endpoints,
    entities_endpoints,
    keys_api_cannot_escalate_and_shows_the_value_once,
    keys_api_validates_its_input,
    key_changes_take_effect_at_once,
    revoking_on_one_node_refuses_on_every_node,
    last_used_at_is_written_at_most_once_a_minute,
    rate_limit_headers_on_every_authenticated_response,
    the_request_over_the_limit_gets_429_with_retry_after,
    nodes_sharing_redis_share_one_budget,
    without_redis_the_service_keeps_serving_with_local_limits,
    failed_authentications_are_limited_per_ip,
    a_change_and_its_event_commit_or_roll_back_together,
);

// ---------------------------------------------------------------- helpers

/// A request with `key` given verbatim (or no header at all).
async fn send(app: &TestApp, method: Method, path: &str, key: Option<&str>) -> TestResponse {
    TestResponse::from(app.api(method, path, key).send().await).await
}

#[track_caller]
fn assert_message(response: &TestResponse, status: u16, code: &str, message: &str) {
    response.assert_error(status, code);
    assert_eq!(
        response.body["error"], message,
        "message of {}",
        response.text
    );
}

/// The stored id of a key value.
async fn key_id(app: &TestApp, key: &str) -> Uuid {
    supportdesk::keys::store::find_for_auth(&app.state.db, &key::hash(key))
        .await
        .expect("lookup")
        .expect("key exists")
        .id
}

fn header_u64(response: &TestResponse, name: &str) -> u64 {
    response
        .header(name)
        .unwrap_or_else(|| panic!("{name} missing on {} {}", response.status, response.text))
        .parse()
        .unwrap_or_else(|_| panic!("{name} is not a number"))
}

#[track_caller]
fn assert_rate_headers(response: &TestResponse, limit: u64) {
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

async fn count_events(app: &TestApp, company: Uuid, name: &str) -> i64 {
    supportdesk::on_db!(&app.state.db, c => sqlx::query_scalar::<_, i64>(
        "SELECT COUNT(*) FROM events WHERE company_id = $1 AND name = $2")
        .bind(company).bind(name).fetch_one(c).await.expect("count events"))
}

async fn count_users(app: &TestApp, company: Uuid) -> i64 {
    supportdesk::on_db!(&app.state.db, c => sqlx::query_scalar::<_, i64>(
        "SELECT COUNT(*) FROM users WHERE company_id = $1")
        .bind(company).fetch_one(c).await.expect("count users"))
}

/// Polls `check` every 50 ms until it holds or `limit` passes.
async fn eventually(limit: Duration, mut check: impl AsyncFnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if check().await {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

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
    supportdesk::companies::set_suspended(&app.state, acme.company.id, true)
        .await
        .expect("suspend");
    let fresh = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    for key in [&acme.key, &fresh] {
        let r = app.get("/entities", key).await;
        assert_message(&r, 403, "account_suspended", "Account is suspended");
    }
    supportdesk::companies::set_suspended(&app.state, acme.company.id, false)
        .await
        .expect("reactivate");
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
    supportdesk::companies::store::set_suspended(&app.state.db, company, true)
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
    // The access routes use DESIGN.md's scopes.
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

// ---------------------------------------------------------------- isolation

async fn modes_and_companies_are_isolated(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    let acme_live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;

    // Keys carry a mode: a TEST key sees and manages TEST keys only.
    let created = app
        .post(
            "/api-keys",
            &acme.key,
            json!({"name": "ci", "scopes": ["tickets:read"]}),
        )
        .await;
    let created = created.assert_status(201).clone();
    assert_eq!(created["type"], "TEST");
    let test_key_path = format!("/api-keys/{}", created["id"].as_str().expect("id"));
    let live_list = app.get("/api-keys", &acme_live).await;
    let live_list = live_list.assert_status(200);
    assert!(
        live_list["data"]
            .as_array()
            .expect("data")
            .iter()
            .all(|k| k["type"] == "LIVE"),
        "{live_list}"
    );
    app.get(&test_key_path, &acme_live)
        .await
        .assert_error(404, "not_found");
    app.patch(&test_key_path, &acme_live, json!({"name": "x"}))
        .await
        .assert_error(404, "not_found");
    app.delete(&test_key_path, &acme_live)
        .await
        .assert_error(404, "not_found");
    let cross = app
        .post(
            "/api-keys",
            &acme.key,
            json!({"name": "live", "type": "LIVE", "scopes": ["tickets:read"]}),
        )
        .await;
    cross.assert_error(400, "validation_failed");
    assert_eq!(cross.body["details"][0]["field"], "type");
    let live_made = app
        .post(
            "/api-keys",
            &acme_live,
            json!({"name": "live", "scopes": ["tickets:read"]}),
        )
        .await;
    let live_made = live_made.assert_status(201);
    assert_eq!(live_made["type"], "LIVE");
    assert!(
        live_made["key"]
            .as_str()
            .expect("key")
            .starts_with("svc_live_")
    );
    let test_list = app.get("/api-keys", &acme.key).await;
    assert!(
        test_list.assert_status(200)["data"]
            .as_array()
            .expect("data")
            .iter()
            .all(|k| k["type"] == "TEST")
    );

    // Users and entities are shared by both modes; events keep the mode.
    let user = app
        .post(
            "/users",
            &acme_live,
            json!({"name": "Lee", "email": "lee@acme.test", "role": "ADMIN"}),
        )
        .await;
    let user_path = format!(
        "/users/{}",
        user.assert_status(201)["id"].as_str().expect("id")
    );
    app.get(&user_path, &acme.key).await.assert_status(200);
    let mode: String = supportdesk::on_db!(&app.state.db, c => sqlx::query_scalar::<_, String>(
        "SELECT mode FROM events WHERE company_id = $1 AND name = 'user.created'")
        .bind(acme.company.id).fetch_one(c).await.expect("event"));
    assert_eq!(mode, "live");
    let entity_path = format!("/entities/{}", acme.entity.id);
    app.get(&entity_path, &acme_live).await.assert_status(200);

    // Company B never sees company A's records: 404, and absent from lists.
    for path in [&user_path, &entity_path, &test_key_path] {
        app.get(path, &other.key)
            .await
            .assert_error(404, "not_found");
        app.patch(path, &other.key, json!({"name": "Mine"}))
            .await
            .assert_error(404, "not_found");
    }
    app.delete(&test_key_path, &other.key)
        .await
        .assert_error(404, "not_found");
    for list in ["/users", "/entities", "/api-keys"] {
        let body = app.get(list, &other.key).await;
        let text = &body.text;
        assert_eq!(body.status, 200, "{text}");
        assert!(
            !text.contains(&acme.company.id.to_string()),
            "{list}: {text}"
        );
        assert!(!text.contains("lee@acme.test"), "{list}: {text}");
    }
    // Referring to another company's entity in a body is a 400.
    let r = app
        .post(
            "/entities",
            &other.key,
            json!({"name": "Sub", "parentId": acme.entity.id}),
        )
        .await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.body["details"][0]["field"], "parentId");
}

// ---------------------------------------------------------------- endpoints

async fn users_endpoints(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();

    let created = app
        .post(
            "/users",
            key,
            json!({"name": "  Ada Lovelace ", "email": "Ada@Acme.test", "role": "ADMIN"}),
        )
        .await;
    let ada = created.assert_status(201).clone();
    assert_eq!(ada["name"], "Ada Lovelace");
    assert_eq!(ada["email"], "ada@acme.test");
    assert_eq!(ada["role"], "ADMIN");
    for field in ["id", "createdAt", "updatedAt"] {
        assert!(ada[field].is_string(), "{field} in {ada}");
    }
    let defaulted = app
        .post(
            "/users",
            key,
            json!({"name": "Bob", "email": "bob@acme.test"}),
        )
        .await;
    assert_eq!(defaulted.assert_status(201)["role"], "AGENT");

    // Duplicate email (any case): 409, on create and on update.
    app.post(
        "/users",
        key,
        json!({"name": "Ada 2", "email": "ADA@acme.test"}),
    )
    .await
    .assert_error(409, "conflict");
    let bob_path = format!("/users/{}", defaulted.body["id"].as_str().expect("id"));
    app.patch(&bob_path, key, json!({"email": "ada@acme.test"}))
        .await
        .assert_error(409, "conflict");

    // Validation: every problem listed; the role names the allowed values.
    let bad = app
        .post(
            "/users",
            key,
            json!({"name": "", "email": "nope", "role": "agent"}),
        )
        .await;
    bad.assert_error(400, "validation_failed");
    let fields: Vec<&str> = bad.body["details"]
        .as_array()
        .expect("details")
        .iter()
        .filter_map(|d| d["field"].as_str())
        .collect();
    assert_eq!(fields, ["name", "email", "role"]);
    assert_eq!(
        bad.body["details"][2]["message"],
        "must be one of: AGENT, ADMIN"
    );
    app.post("/users", key, json!({"name": "No mail"}))
        .await
        .assert_error(400, "validation_failed");
    app.patch(&bob_path, key, json!({}))
        .await
        .assert_error(400, "validation_failed");

    // Get and update.
    let got = app.get(&bob_path, key).await;
    assert_eq!(got.assert_status(200)["email"], "bob@acme.test");
    let updated = app
        .patch(&bob_path, key, json!({"name": "Robert", "role": "ADMIN"}))
        .await;
    let updated = updated.assert_status(200);
    assert_eq!(updated["name"], "Robert");
    assert_eq!(updated["role"], "ADMIN");
    assert_eq!(updated["email"], "bob@acme.test");
    app.get("/users/not-an-id", key)
        .await
        .assert_error(404, "not_found");

    // Paginated list, newest first, limit clamped, bad values refused.
    let list = app.get("/users?limit=1", key).await;
    let list = list.assert_status(200);
    assert_eq!(list["total"], 2);
    assert_eq!(list["limit"], 1);
    assert_eq!(list["offset"], 0);
    assert_eq!(list["data"][0]["name"], "Robert");
    let second = app.get("/users?limit=1&offset=1", key).await;
    assert_eq!(second.assert_status(200)["data"][0]["name"], "Ada Lovelace");
    assert_eq!(app.get("/users?limit=500", key).await.body["limit"], 100);
    for bad in ["/users?limit=0", "/users?offset=-1", "/users?limit=x"] {
        app.get(bad, key)
            .await
            .assert_error(400, "validation_failed");
    }
}

async fn entities_endpoints(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();

    let sub = app
        .post(
            "/entities",
            key,
            json!({"name": "Subsidiary", "parentId": acme.entity.id}),
        )
        .await;
    let sub = sub.assert_status(201).clone();
    assert_eq!(sub["parentId"], acme.entity.id.to_string());
    let sub_path = format!("/entities/{}", sub["id"].as_str().expect("id"));

    // GET shows the public widget key of each mode.
    let got = app.get(&sub_path, key).await;
    let got = got.assert_status(200);
    assert!(
        got["widgetKeyTest"]
            .as_str()
            .expect("test")
            .starts_with("wk_test_")
    );
    assert!(
        got["widgetKeyLive"]
            .as_str()
            .expect("live")
            .starts_with("wk_live_")
    );
    assert_ne!(got["widgetKeyTest"], got["widgetKeyLive"]);

    // A parent that would make a cycle, or does not exist, is a 400.
    let main_path = format!("/entities/{}", acme.entity.id);
    app.patch(&main_path, key, json!({"parentId": sub["id"]}))
        .await
        .assert_error(400, "validation_failed");
    app.post(
        "/entities",
        key,
        json!({"name": "X", "parentId": Uuid::now_v7()}),
    )
    .await
    .assert_error(400, "validation_failed");
    let moved = app
        .patch(&sub_path, key, json!({"parentId": null, "name": "Top"}))
        .await;
    let moved = moved.assert_status(200);
    assert_eq!(moved["parentId"], Value::Null);
    assert_eq!(moved["name"], "Top");
    let list = app.get("/entities", key).await;
    assert_eq!(
        list.assert_status(200)["data"].as_array().map(Vec::len),
        Some(2)
    );
}

async fn keys_api_cannot_escalate_and_shows_the_value_once(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let limited = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::from_scopes([Scope::ApiKeysRead, Scope::ApiKeysWrite, Scope::TicketsRead]),
        )
        .await;

    // Granting a scope the caller lacks: 403 naming it.
    let r = app
        .post(
            "/api-keys",
            &limited,
            json!({"name": "x", "scopes": ["tickets:read", "kb:write"]}),
        )
        .await;
    assert_message(
        &r,
        403,
        "insufficient_scope",
        "Missing required permission: kb:write",
    );

    let created = app
        .post(
            "/api-keys",
            &limited,
            json!({"name": "reader", "scopes": ["tickets:read"], "rateLimit": 50}),
        )
        .await;
    let created = created.assert_status(201).clone();
    let secret = created["key"].as_str().expect("key value").to_string();
    assert!(secret.starts_with("svc_test_"));
    assert_eq!(created["prefix"], &secret[..12]);
    assert_eq!(created["scopes"], json!(["tickets:read"]));
    assert_eq!(created["rateLimit"], 50);
    assert_eq!(created["isActive"], true);
    assert_eq!(created["expiresAt"], Value::Null);
    let path = format!("/api-keys/{}", created["id"].as_str().expect("id"));

    // The new key works, with its own limit.
    let used = app.get("/entities", &secret).await;
    used.assert_error(403, "insufficient_scope");
    assert_eq!(header_u64(&used, "x-ratelimit-limit"), 50);

    // Widening it, or touching a key holding more, is refused too.
    app.patch(
        &path,
        &limited,
        json!({"scopes": ["tickets:read", "tickets:write"]}),
    )
    .await
    .assert_error(403, "insufficient_scope");
    let admin_path = format!("/api-keys/{}", key_id(&app, &acme.key).await);
    app.patch(&admin_path, &limited, json!({"isActive": false}))
        .await
        .assert_error(403, "insufficient_scope");
    app.delete(&admin_path, &limited)
        .await
        .assert_error(403, "insufficient_scope");
    app.get("/entities", &acme.key).await.assert_status(200);

    // The value is never shown again: not in get, list or update responses.
    let shown = [
        app.get(&path, &limited).await,
        app.get("/api-keys", &limited).await,
        app.get("/api-keys?limit=100", &acme.key).await,
        app.patch(&path, &limited, json!({"name": "renamed"})).await,
    ];
    for r in &shown {
        assert_eq!(r.status, 200, "{}", r.text);
        assert!(!r.text.contains(&secret), "secret leaked: {}", r.text);
        assert!(!r.text.contains("\"key\""), "key field in {}", r.text);
    }
    assert_eq!(shown[0].body["name"], "reader");
    assert_eq!(shown[3].body["name"], "renamed");
    assert!(shown[1].body["total"].as_i64().expect("total") >= 2);
    // Only the hash is stored.
    let stored: String = supportdesk::on_db!(&app.state.db, c => sqlx::query_scalar::<_, String>(
        "SELECT key_hash FROM api_keys WHERE key_prefix = $1")
        .bind(&secret[..12]).fetch_one(c).await.expect("stored"));
    assert_eq!(stored, key::hash(&secret));

    // Revoking: 204, then 404, and the key no longer authenticates.
    app.delete(&path, &limited).await.assert_status(204);
    app.get(&path, &limited)
        .await
        .assert_error(404, "not_found");
    app.get("/api-keys", &secret)
        .await
        .assert_error(401, "invalid_api_key");
}

async fn keys_api_validates_its_input(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let cases = [
        (json!({"scopes": ["kb:read"]}), "name"),
        (json!({"name": "x"}), "scopes"),
        (json!({"name": "x", "scopes": []}), "scopes"),
        (
            json!({"name": "x", "scopes": ["kb:read", "kb:everything"]}),
            "scopes",
        ),
        (json!({"name": "x", "scopes": "kb:read"}), "scopes"),
        (
            json!({"name": "x", "scopes": ["kb:read"], "type": "test"}),
            "type",
        ),
        (
            json!({"name": "x", "scopes": ["kb:read"], "rateLimit": 0}),
            "rateLimit",
        ),
        (
            json!({"name": "x", "scopes": ["kb:read"], "rateLimit": 2_000_000}),
            "rateLimit",
        ),
        (
            json!({"name": "x", "scopes": ["kb:read"], "expiresAt": "2001-01-01T00:00:00Z"}),
            "expiresAt",
        ),
        (
            json!({"name": "x", "scopes": ["kb:read"], "expiresAt": "tomorrow"}),
            "expiresAt",
        ),
        (
            json!({"name": "x", "scopes": ["kb:read"], "expiresIn": "3 weeks"}),
            "expiresIn",
        ),
        (
            json!({"name": "x", "scopes": ["kb:read"], "expiresIn": -5}),
            "expiresIn",
        ),
        (
            json!({"name": "x", "scopes": ["kb:read"], "expiresIn": 60, "expiresAt": "2099-01-01T00:00:00Z"}),
            "expiresIn",
        ),
    ];
    for (body, field) in cases {
        let r = app.post("/api-keys", key, body.clone()).await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.body["details"][0]["field"], field, "{body}: {}", r.text);
    }
    let listed = app.get("/api-keys", key).await;
    assert_eq!(listed.body["total"], 1, "nothing was created");

    // Expiry as a duration or a time.
    let in_30d = app
        .post(
            "/api-keys",
            key,
            json!({"name": "month", "scopes": ["kb:read"], "expiresIn": "30d"}),
        )
        .await;
    let expires: Timestamp =
        serde_json::from_value(in_30d.assert_status(201)["expiresAt"].clone()).expect("time");
    let expected = Timestamp::now().plus(Duration::from_secs(30 * 86_400));
    assert!(
        (expected.0 - expires.0).num_seconds().abs() < 120,
        "{expires}"
    );
    let at = app
        .post(
            "/api-keys",
            key,
            json!({"name": "fixed", "scopes": ["kb:read"], "expiresAt": "2099-01-01T00:00:00Z", "type": "TEST"}),
        )
        .await;
    assert_eq!(
        at.assert_status(201)["expiresAt"],
        "2099-01-01T00:00:00.000Z"
    );
    let secs = app
        .post(
            "/api-keys",
            key,
            json!({"name": "minute", "scopes": ["kb:read"], "expiresIn": 60}),
        )
        .await;
    secs.assert_status(201);

    // Updates are validated too.
    let path = format!("/api-keys/{}", at.body["id"].as_str().expect("id"));
    for (body, field) in [
        (json!({}), "body"),
        (json!({"name": " "}), "name"),
        (json!({"scopes": ["nope"]}), "scopes"),
        (json!({"rateLimit": -1}), "rateLimit"),
        (json!({"isActive": "no"}), "isActive"),
    ] {
        let r = app.patch(&path, key, body.clone()).await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.body["details"][0]["field"], field, "{body}: {}", r.text);
    }
    app.patch(
        &format!("/api-keys/{}", Uuid::now_v7()),
        key,
        json!({"name": "x"}),
    )
    .await
    .assert_error(404, "not_found");
    app.delete(&format!("/api-keys/{}", Uuid::now_v7()), key)
        .await
        .assert_error(404, "not_found");
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
    let refused = eventually(Duration::from_secs(5), async || {
        node_b.get("/entities", &victim).await.status == 401
    })
    .await;
    assert!(refused, "node B still accepts the revoked key");
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
    assert!(
        eventually(Duration::from_secs(10), async || {
            last_used().await.is_some()
        })
        .await,
        "lastUsedAt recorded"
    );
    let first = last_used().await;

    // More requests, on this node and on a second one: no further write.
    for _ in 0..5 {
        app.get("/entities", &acme.key).await.assert_status(200);
    }
    let peer = app.spawn_peer().await;
    peer.get("/entities", &acme.key).await.assert_status(200);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(last_used().await, first);
    let shown = app.get("/api-keys", &acme.key).await;
    assert_eq!(
        shown.body["data"][0]["lastUsedAt"],
        serde_json::to_value(first).expect("json")
    );
}

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
    tokio::time::sleep(Duration::from_secs(retry)).await;
    let allowed = eventually(Duration::from_secs(10), async || {
        quick.get("/entities", &two).await.status == 200
    })
    .await;
    assert!(allowed, "the allowance came back");
}

async fn nodes_sharing_redis_share_one_budget(backend: Backend) {
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
        let up = eventually(Duration::from_secs(10), async || {
            match client.get_multiplexed_async_connection().await {
                Ok(mut conn) => redis::cmd("PING")
                    .query_async::<String>(&mut conn)
                    .await
                    .is_ok(),
                Err(_) => false,
            }
        })
        .await;
        assert!(up, "private redis-server answers");
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
    let app = TestApp::spawn(backend).await;
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
    // A valid key from the same address is still served.
    app.get("/entities", &acme.key).await.assert_status(200);
}

// ---------------------------------------------------------------- events

async fn a_change_and_its_event_commit_or_roll_back_together(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let company = acme.company.id;
    let tenant = supportdesk::auth::Tenant {
        company_id: company,
        mode: Mode::Test,
    };

    // Committed: the user and its event.
    app.post(
        "/users",
        &acme.key,
        json!({"name": "A", "email": "a@acme.test"}),
    )
    .await
    .assert_status(201);
    assert_eq!(
        (
            count_users(&app, company).await,
            count_events(&app, company, "user.created").await
        ),
        (1, 1)
    );

    // Refused (duplicate email): neither.
    app.post(
        "/users",
        &acme.key,
        json!({"name": "B", "email": "a@acme.test"}),
    )
    .await
    .assert_error(409, "conflict");
    assert_eq!(
        (
            count_users(&app, company).await,
            count_events(&app, company, "user.created").await
        ),
        (1, 1)
    );

    // A transaction that is not committed leaves neither behind...
    let mut tx = app.state.db.begin().await.expect("begin");
    let new = |email: &str| supportdesk::users::store::NewUser {
        id: None,
        name: "C".into(),
        email: email.into(),
        role: "AGENT".into(),
    };
    supportdesk::users::store::create_in(&mut tx, &tenant, new("c@acme.test"))
        .await
        .expect("created in tx");
    drop(tx);
    assert_eq!(
        (
            count_users(&app, company).await,
            count_events(&app, company, "user.created").await
        ),
        (1, 1)
    );
    // ...and a committed one leaves both.
    let mut tx = app.state.db.begin().await.expect("begin");
    supportdesk::users::store::create_in(&mut tx, &tenant, new("c@acme.test"))
        .await
        .expect("created in tx");
    tx.commit().await.expect("commit");
    assert_eq!(
        (
            count_users(&app, company).await,
            count_events(&app, company, "user.created").await
        ),
        (2, 2)
    );
    let data: Value = supportdesk::on_db!(&app.state.db, c => sqlx::query_scalar::<_, sqlx::types::Json<Value>>(
        "SELECT data FROM events WHERE company_id = $1 AND name = 'user.created' ORDER BY created_at, id")
        .bind(company).fetch_all(c).await.expect("events"))
        .into_iter()
        .map(|j| j.0)
        .next()
        .expect("first event");
    assert_eq!(data["email"], "a@acme.test");
}
