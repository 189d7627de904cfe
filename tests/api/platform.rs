//! The platform: error shapes from every layer, request ids, migrations,
//! bootstrap, the CLI and graceful shutdown.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::backend_tests;
use crate::postgres_tests;
use crate::support::{Backend, TestApp, eventually};

backend_tests!(
    errors_have_the_json_shape_on_every_layer,
    panics_become_a_clean_500,
    request_ids_are_generated_or_echoed,
    migrations_apply_from_empty_and_again,
    bootstrap_creates_a_working_demo_key_once,
    a_start_creates_the_demo_only_on_sqlite_or_when_asked,
    nodes_starting_together_create_one_demo,
    cli_creates_companies_entities_and_keys,
    graceful_shutdown_finishes_in_flight_requests,
    health_and_readiness,
);
postgres_tests!(a_kept_connection_the_server_cut_is_replaced_before_use);

async fn errors_have_the_json_shape_on_every_layer(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();

    // Unknown route under /api/v1 with a valid key, and outside it.
    app.get("/nope", key).await.assert_error(404, "not_found");
    let outside =
        crate::support::TestResponse::from(app.client.get(app.url("/nope")).send().await).await;
    outside.assert_error(404, "not_found");

    // Authentication comes before routing: no key on an unknown route is 401.
    let no_key =
        crate::support::TestResponse::from(app.api(Method::GET, "/nope", None).send().await).await;
    no_key.assert_error(401, "missing_api_key");
    assert_eq!(no_key.body["error"], "X-API-Key header is required");

    // Wrong method on a known route.
    app.delete("/entities", key)
        .await
        .assert_error(405, "method_not_allowed");

    // Malformed JSON, wrong types, wrong content type, oversized body.
    let malformed = app
        .api(Method::POST, "/entities", Some(key))
        .header("content-type", "application/json")
        .body("{\"name\": ")
        .send()
        .await;
    crate::support::TestResponse::from(malformed)
        .await
        .assert_error(400, "invalid_json");

    let wrong_type = app.post("/entities", key, json!({"name": 42})).await;
    wrong_type.assert_error(400, "validation_failed");
    assert_eq!(wrong_type.body["details"][0]["field"], "name");

    let not_json = app
        .api(Method::POST, "/entities", Some(key))
        .header("content-type", "text/plain")
        .body("name=x")
        .send()
        .await;
    crate::support::TestResponse::from(not_json)
        .await
        .assert_error(415, "unsupported_media_type");

    let huge = json!({"name": "x".repeat(1024 * 1024 + 10)});
    app.post("/entities", key, huge)
        .await
        .assert_error(413, "payload_too_large");

    // Validation lists each field; nothing is created.
    let empty = app.post("/entities", key, json!({"name": "   "})).await;
    empty.assert_error(400, "validation_failed");
    assert_eq!(empty.body["details"][0]["field"], "name");
    let listed = app.get("/entities", key).await;
    assert_eq!(
        listed.assert_status(200)["data"].as_array().map(Vec::len),
        Some(1)
    );

    // Malformed and unknown ids are both 404.
    app.get("/entities/not-a-uuid", key)
        .await
        .assert_error(404, "not_found");
    app.get(&format!("/entities/{}", uuid::Uuid::now_v7()), key)
        .await
        .assert_error(404, "not_found");
}

async fn panics_become_a_clean_500(backend: Backend) {
    use tower::ServiceExt;
    let app = TestApp::spawn(backend).await;
    let routes = axum::Router::new().route(
        "/boom",
        axum::routing::get(|| async {
            if true {
                panic!("secret internal detail");
            }
            "unreachable"
        }),
    );
    let service = supportdesk::app::layered(routes).with_state(app.state.clone());
    let response = service
        .oneshot(
            axum::http::Request::get("/boom")
                .body(axum::body::Body::empty())
                .expect("request"),
        )
        .await
        .expect("infallible");
    assert_eq!(response.status(), 500);
    assert!(response.headers().contains_key("x-request-id"));
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .expect("body");
    let body: Value = serde_json::from_slice(&bytes).expect("json body");
    assert_eq!(
        body,
        json!({"error": "Internal server error", "code": "internal", "status": 500})
    );
}

async fn request_ids_are_generated_or_echoed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let generated = app
        .client
        .get(app.url("/healthz"))
        .send()
        .await
        .expect("sent");
    let id = generated.headers()["x-request-id"].to_str().expect("ascii");
    assert!(uuid::Uuid::parse_str(id).is_ok(), "generated id {id}");

    let echoed = app
        .client
        .get(app.url("/api/v1/entities"))
        .header("x-request-id", "trace-me-123")
        .send()
        .await
        .expect("sent");
    assert_eq!(echoed.status(), 401);
    assert_eq!(echoed.headers()["x-request-id"], "trace-me-123");
}

async fn migrations_apply_from_empty_and_again(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    // The app migrated its empty database at start; running again is a no-op.
    app.state
        .db
        .migrate()
        .await
        .expect("second migrate is a no-op");
    let acme = app.company().await;
    let entity = app
        .get(&format!("/entities/{}", acme.entity.id), &acme.key)
        .await;
    assert_eq!(entity.assert_status(200)["name"], "Main");
}

async fn bootstrap_creates_a_working_demo_key_once(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| {
        c.bootstrap_demo = true;
        c.demo = true;
    })
    .await;
    // The harness app bootstrapped its empty database: find what it made by
    // building a second app on the same database, which must create nothing.
    let second = supportdesk::App::build(app.config.clone())
        .await
        .expect("builds");
    assert!(second.demo.is_none(), "nothing is created on a later start");
    drop(second);

    let db_app = TestApp::spawn_with(backend, |c| c.bootstrap_demo = false).await;
    let demo = supportdesk::bootstrap::ensure_demo(&db_app.state.db, "http://x")
        .await
        .expect("bootstrap")
        .expect("created on an empty database");
    assert!(demo.key.starts_with("svc_test_"));
    assert!(demo.visitor_url.contains(&demo.entity.widget_key_test));
    // The printed key exists and authenticates with every scope.
    let entities = db_app.get("/entities", &demo.key).await;
    assert_eq!(entities.assert_status(200)["data"][0]["name"], "Demo");
    assert!(
        supportdesk::bootstrap::ensure_demo(&db_app.state.db, "http://x")
            .await
            .expect("bootstrap")
            .is_none()
    );
}

async fn companies(app: &TestApp) -> i64 {
    supportdesk::companies::store::count(&app.state.db)
        .await
        .expect("count")
}

async fn a_start_creates_the_demo_only_on_sqlite_or_when_asked(backend: Backend) {
    // A `serve` start without --demo: the embedded SQLite default gets the
    // demo as before, a Postgres database is left empty.
    let plain = TestApp::spawn_with(backend, |c| c.bootstrap_demo = true).await;
    let expected = match backend {
        Backend::Sqlite => 1,
        Backend::Postgres => 0,
    };
    assert_eq!(companies(&plain).await, expected);

    // With --demo / SUPPORTDESK_DEMO=true every backend gets it.
    let demo = TestApp::spawn_with(backend, |c| {
        c.bootstrap_demo = true;
        c.demo = true;
    })
    .await;
    assert_eq!(companies(&demo).await, 1);
}

async fn nodes_starting_together_create_one_demo(backend: Backend) {
    // An empty database (the harness app bootstraps nothing), then two nodes
    // with --demo starting on it at once.
    let app = TestApp::spawn(backend).await;
    let mut config = app.config.clone();
    config.bootstrap_demo = true;
    config.demo = true;
    let (a, b) = tokio::join!(
        supportdesk::App::build(config.clone()),
        supportdesk::App::build(config)
    );
    let (a, b) = (a.expect("first node"), b.expect("second node"));
    assert_eq!(
        usize::from(a.demo.is_some()) + usize::from(b.demo.is_some()),
        1,
        "exactly one node creates the demo"
    );
    drop((a, b));
    assert_eq!(companies(&app).await, 1);
}

pub(crate) fn cli(app: &TestApp, args: &[&str]) -> (bool, String, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_supportdesk"))
        .args(args)
        .env("DATABASE_URL", &app.config.database_url)
        .env("SUPPORTDESK_DATA_DIR", &app.config.data_dir)
        .env("RUST_LOG", "error")
        .output()
        .expect("run the binary");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

pub(crate) fn cli_json(app: &TestApp, args: &[&str]) -> Value {
    let (ok, stdout, stderr) = cli(app, args);
    assert!(ok, "{args:?} failed: {stderr}");
    assert_eq!(stdout.lines().count(), 1, "one JSON object: {stdout}");
    serde_json::from_str(&stdout).expect("JSON on stdout")
}

async fn cli_creates_companies_entities_and_keys(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let company = cli_json(&app, &["companies", "create", "--name", "Globex", "--json"]);
    assert_eq!(company["name"], "Globex");
    assert_eq!(company["status"], "active");
    let company_id = company["id"].as_str().expect("id").to_string();

    let entity = cli_json(
        &app,
        &[
            "entities",
            "create",
            "--company",
            &company_id,
            "--name",
            "EU",
            "--json",
        ],
    );
    assert_eq!(entity["companyId"], company_id.as_str());

    let key = cli_json(
        &app,
        &[
            "keys",
            "create",
            "--company",
            &company_id,
            "--type",
            "live",
            "--scopes",
            "entities:read,tickets:read",
            "--rate-limit",
            "50",
            "--expires-in",
            "30d",
            "--json",
        ],
    );
    let secret = key["key"].as_str().expect("key value").to_string();
    assert!(secret.starts_with("svc_live_"));
    assert_eq!(key["type"], "LIVE");
    assert_eq!(key["scopes"], json!(["tickets:read", "entities:read"]));
    assert_eq!(key["rateLimit"], 50);

    // The key works against the running service.
    let listed = app.get("/entities", &secret).await;
    assert_eq!(listed.assert_status(200)["data"][0]["name"], "EU");

    let keys = cli_json(&app, &["keys", "list", "--company", &company_id, "--json"]);
    assert_eq!(keys["data"].as_array().map(Vec::len), Some(1));
    assert!(
        !keys.to_string().contains(&secret),
        "list never shows the secret"
    );

    let (ok, _, _) = cli(&app, &["keys", "revoke", key["id"].as_str().expect("id")]);
    assert!(ok);
    let keys = cli_json(&app, &["keys", "list", "--company", &company_id, "--json"]);
    assert_eq!(keys["data"].as_array().map(Vec::len), Some(0));

    let (ok, _, _) = cli(&app, &["companies", "suspend", &company_id]);
    assert!(ok);
    let (ok, _, stderr) = cli(
        &app,
        &["keys", "create", "--company", &company_id, "--type", "x"],
    );
    assert!(!ok, "invalid type is refused: {stderr}");
}

async fn graceful_shutdown_finishes_in_flight_requests(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let body = br#"{"name": "Created during shutdown"}"#;
    let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", app.port))
        .await
        .expect("connect");
    let head = format!(
        "POST /api/v1/entities HTTP/1.1\r\nHost: localhost\r\nX-API-Key: {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        acme.key,
        body.len()
    );
    socket.write_all(head.as_bytes()).await.expect("head");
    socket.write_all(&body[..10]).await.expect("half the body");
    // The server has the request once it has authenticated it: the key's
    // first use is recorded then (the handler goes on to wait for the body).
    eventually("the server authenticated the request", async || {
        app.state.access.last_used_writes() == 1
    })
    .await;

    // Shutdown starts while the request is still being received: the
    // server closes its listener at once, then lets requests finish.
    app.shutdown_handle().trigger();
    eventually("the server refuses new connections", async || {
        tokio::net::TcpStream::connect(("127.0.0.1", app.port))
            .await
            .is_err()
    })
    .await;
    socket
        .write_all(&body[10..])
        .await
        .expect("rest of the body");
    let mut response = String::new();
    tokio::time::timeout(
        Duration::from_secs(10),
        socket.read_to_string(&mut response),
    )
    .await
    .expect("response before timeout")
    .expect("read");
    assert!(
        response.starts_with("HTTP/1.1 201"),
        "in-flight request finished: {response}"
    );

    // New connections are no longer accepted once it has stopped.
    eventually("the server stops", async || app.has_stopped()).await;
    assert!(app.client.get(app.url("/healthz")).send().await.is_err());
}

async fn health_and_readiness(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let health = app
        .client
        .get(app.url("/healthz"))
        .send()
        .await
        .expect("sent");
    assert_eq!(health.status(), 200);
    let ready: Value = app
        .client
        .get(app.url("/readyz"))
        .send()
        .await
        .expect("sent")
        .json()
        .await
        .expect("json");
    assert_eq!(ready["ready"], true);
    assert_eq!(ready["store"], "ok");
    let expected_redis = if app.config.redis_url.is_some() {
        "ok"
    } else {
        "not configured"
    };
    assert_eq!(ready["redis"], expected_redis);
}

/// Connections a request finished with are kept and handed out again
/// without a ping; one the server cut while it sat unused (a restart, a
/// proxy's idle timeout) is pinged once it has sat for the idle limit, and
/// replaced, so the next request is served instead of failing.
async fn a_kept_connection_the_server_cut_is_replaced_before_use(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let path = format!("/entities/{}", acme.entity.id);
    app.get(&path, &acme.key).await.assert_status(200);

    let pool = app.postgres_pool();
    let cut: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    .fetch_all(pool.sqlx())
    .await
    .expect("terminate the app's other connections");
    assert!(!cut.is_empty());

    // Real time, not the node's clock: the pool mirrors sqlx's own idle
    // limits, which sqlx measures on the wall clock, and what is waited for
    // is a real connection sitting idle past the ping threshold.
    tokio::time::sleep(supportdesk::db::pool::PING_AFTER_IDLE + Duration::from_millis(200)).await;
    app.get(&path, &acme.key).await.assert_status(200);
}
