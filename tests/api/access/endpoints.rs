//! The users, entities and api-keys endpoints: validation, pagination,
//! conflicts, no scope escalation, the key value shown once.

use std::time::Duration;

use serde_json::{Value, json};
use supportdesk::auth::{Mode, Scope, ScopeSet, key};
use supportdesk::time::Timestamp;
use uuid::Uuid;

use super::{assert_message, header_u64, key_id};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    users_endpoints,
    entities_endpoints,
    keys_api_cannot_escalate_and_shows_the_value_once,
    keys_api_validates_its_input,
    keys_api_cannot_exceed_the_callers_expiry_or_rate_limit,
);

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
            json!({"name": "", "email": "nope", "role": "boss"}),
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
        "names no role of the company (built-in: owner, admin, agent, viewer; or a custom role's name)"
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

async fn keys_api_cannot_exceed_the_callers_expiry_or_rate_limit(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let own_expiry = Timestamp::now().plus(Duration::from_secs(3600));
    // Ten requests an hour: this test makes fewer than ten with the key.
    let (record, capped) = supportdesk::keys::store::create(
        &app.state.db,
        supportdesk::keys::store::NewKey {
            company_id: acme.company.id,
            name: "capped".into(),
            mode: Mode::Test,
            scopes: ScopeSet::all(),
            rate_limit: 10,
            expires_at: Some(own_expiry),
        },
        app.state.clock.now(),
    )
    .await
    .expect("key");
    let later = own_expiry.plus(Duration::from_secs(60)).to_rfc3339();
    let expiry_refusals = [
        (
            json!({"name": "forever", "scopes": ["kb:read"]}),
            format!(
                "Cannot grant a key without expiresAt or expiresIn: the calling key expires at {own_expiry}"
            ),
        ),
        (
            json!({"name": "later", "scopes": ["kb:read"], "expiresAt": later}),
            format!("Cannot grant an expiresAt later than the calling key's expiry ({own_expiry})"),
        ),
        (
            json!({"name": "later", "scopes": ["kb:read"], "expiresIn": "2h"}),
            format!("Cannot grant an expiresIn later than the calling key's expiry ({own_expiry})"),
        ),
    ];
    for (body, message) in expiry_refusals {
        let r = app.post("/api-keys", &capped, body).await;
        assert_message(&r, 403, "insufficient_scope", &message);
    }
    let rate_refusal = "Cannot grant a rateLimit above the calling key's (10)";
    let r = app
        .post(
            "/api-keys",
            &capped,
            json!({"name": "fast", "scopes": ["kb:read"], "expiresIn": "30m", "rateLimit": 11}),
        )
        .await;
    assert_message(&r, 403, "insufficient_scope", rate_refusal);
    let own_path = format!("/api-keys/{}", record.id);
    let r = app
        .patch(&own_path, &capped, json!({"rateLimit": 11}))
        .await;
    assert_message(&r, 403, "insufficient_scope", rate_refusal);

    // Within the caps: created, and raising it past the caller is refused.
    let within = app
        .post(
            "/api-keys",
            &capped,
            json!({"name": "ok", "scopes": ["kb:read"], "expiresIn": "30m", "rateLimit": 10}),
        )
        .await;
    let within = within.assert_status(201).clone();
    assert_eq!(within["rateLimit"], 10);
    let within_path = format!("/api-keys/{}", within["id"].as_str().expect("id"));
    let r = app
        .patch(&within_path, &capped, json!({"rateLimit": 11}))
        .await;
    assert_message(&r, 403, "insufficient_scope", rate_refusal);

    // Nothing was changed by the refusals.
    let stored = app.get(&own_path, &acme.key).await;
    assert_eq!(stored.assert_status(200)["rateLimit"], 10);
    let listed = app.get("/api-keys?limit=100", &acme.key).await;
    assert_eq!(listed.assert_status(200)["total"], 3);
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
