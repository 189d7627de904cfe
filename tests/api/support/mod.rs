//! The test harness: starts the real service on 127.0.0.1:0 for a backend.
//!
//! - `sqlite`: a temp-dir SQLite file, in-process presence/fan-out/limits.
//! - `postgres`: a fresh database per test (from `TEST_DATABASE_URL`) and,
//!   when `TEST_REDIS_URL` is set, Redis with a unique key prefix per test.
//!
//! `backend_tests!(a, b)` turns each `async fn a(backend: Backend)` into the
//! tests `a::sqlite` and `a::postgres`. Without `TEST_DATABASE_URL` the
//! postgres ones pass after printing `SKIPPED (no TEST_DATABASE_URL): <name>`
//! with the running count of skips (past libtest's output capture, so the
//! notice shows in a normal run), unless `CI=true`, where they fail.

#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

mod empty;
mod locks;
mod macros;
mod oversized;
mod pg;
mod plan;
mod poll;
mod response;
mod retention;
mod standing;
mod template;

pub use empty::EmptyDatabase;
pub use locks::{send_behind_a_row_lock, send_behind_the_ticket_counter};
pub use oversized::{post_refused_body, post_unfinished_body};
pub(crate) use pg::drop_left_behind;
pub use pg::replace_database;
use pg::{TempPgDatabase, pg_admin};
pub use plan::plan;
pub use poll::{eventually, eventually_within};
pub use response::{TestResponse, assert_invalid};
pub use retention::{retention_pass, retention_pass_with};

use reqwest::Method;
use serde_json::Value;
use supportdesk::auth::{Mode, ScopeSet};
use supportdesk::companies::Company;
use supportdesk::entities::Entity;
use supportdesk::keys::NewKey;
use supportdesk::{App, AppState, Config};
use tokio::task::JoinHandle;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// The Postgres backend when configured; in CI its absence is a failure,
    /// elsewhere the test named `test` is reported as skipped.
    pub fn postgres(test: &str) -> Option<Backend> {
        if std::env::var("TEST_DATABASE_URL").is_ok_and(|u| !u.is_empty()) {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                assert!(
                    std::env::var("TEST_REDIS_URL").is_ok_and(|u| !u.is_empty()),
                    "CI=true needs TEST_REDIS_URL"
                );
            }
            return Some(Backend::Postgres);
        }
        assert!(
            !std::env::var("CI").is_ok_and(|v| v == "true"),
            "CI=true needs TEST_DATABASE_URL: Postgres tests must run in CI"
        );
        report_skipped(test);
        None
    }
}

tokio::task_local! {
    /// The Redis the nodes a test starts use instead of `TEST_REDIS_URL`,
    /// on either backend (see [`with_redis`]).
    static REDIS_URL_OVERRIDE: String;
}

/// Runs `test` with every node it starts on the Redis at `url` (a Redis
/// Cluster, for the cluster tests), each test with its own key prefix.
pub async fn with_redis<F: std::future::Future>(url: String, test: F) -> F::Output {
    REDIS_URL_OVERRIDE.scope(url, test).await
}

/// How many postgres variants this run has skipped so far.
static POSTGRES_SKIPPED: AtomicUsize = AtomicUsize::new(0);

/// Prints the skip on the real stderr: `eprintln!` is captured per test and
/// only shown when the test fails, which would hide the skip. A libtest
/// harness has no hook at the end of the run (and this crate forbids the
/// unsafe `atexit`), so each line carries the running total: the last line
/// printed is the run's count.
fn report_skipped(test: &str) {
    use std::io::Write;
    let skipped = POSTGRES_SKIPPED.fetch_add(1, Ordering::Relaxed) + 1;
    // The name as libtest prints it, without the crate's own module.
    let name = test.split_once("::").map_or(test, |(_, name)| name);
    let _ = writeln!(
        std::io::stderr().lock(),
        "SKIPPED (no TEST_DATABASE_URL): {name} [postgres tests skipped so far: {skipped}]"
    );
}

/// A company with an entity and a TEST key holding every scope.
pub struct TestCompany {
    pub company: Company,
    pub entity: Entity,
    pub key: String,
}

pub struct TestApp {
    pub backend: Backend,
    pub address: String,
    pub port: u16,
    /// The demo shop's base URL when the config enables the demo.
    pub shop_url: Option<String>,
    /// The `GET /metrics` listener's port when the config sets `metrics_bind`.
    pub metrics_port: Option<u16>,
    pub state: AppState,
    pub config: Config,
    pub client: reqwest::Client,
    shutdown: supportdesk::app::ShutdownHandle,
    server: Option<JoinHandle<anyhow::Result<()>>>,
    _dir: std::sync::Arc<tempfile::TempDir>,
    _pg: Option<std::sync::Arc<TempPgDatabase>>,
}

impl TestApp {
    pub async fn spawn(backend: Backend) -> TestApp {
        Self::spawn_with(backend, |_| {}).await
    }

    /// Starts the app after `adjust` has changed the test config.
    pub async fn spawn_with(backend: Backend, adjust: impl FnOnce(&mut Config)) -> TestApp {
        let dir = tempfile::tempdir().expect("temp dir");
        let (pg, url) = match backend {
            Backend::Sqlite => {
                let file = dir.path().join("test.db");
                template::write_sqlite(&file).await;
                (None, format!("sqlite://{}?mode=rwc", file.display()))
            }
            Backend::Postgres => {
                let (db, url) = TempPgDatabase::create().await;
                (Some(std::sync::Arc::new(db)), url)
            }
        };
        let mut config = Config::new(url, dir.path().to_path_buf());
        config.webhook_allow_private = true;
        // Replies are delivered at once unless a test of the undo window
        // sets one: every other test reads its reply's events right away.
        config.undo_send = std::time::Duration::ZERO;
        if backend == Backend::Postgres {
            config.redis_url = std::env::var("TEST_REDIS_URL")
                .ok()
                .filter(|u| !u.is_empty());
            config.redis_prefix = format!("sdt:{}:", uuid::Uuid::new_v4().simple());
        }
        if let Ok(url) = REDIS_URL_OVERRIDE.try_with(String::clone) {
            config.redis_url = Some(url);
            config.redis_prefix = format!("sdt:{}:", uuid::Uuid::new_v4().simple());
        }
        adjust(&mut config);
        Self::start(backend, config, std::sync::Arc::new(dir), pg).await
    }

    /// A second node on the same database, Redis and data dir (multi-node tests).
    pub async fn spawn_peer(&self) -> TestApp {
        self.spawn_peer_with(|_| {}).await
    }

    /// A second node whose config `adjust` has changed (e.g. its clock).
    pub async fn spawn_peer_with(&self, adjust: impl FnOnce(&mut Config)) -> TestApp {
        let mut config = self.config.clone();
        config.bind = "127.0.0.1:0".into();
        adjust(&mut config);
        Self::start(self.backend, config, self._dir.clone(), self._pg.clone()).await
    }

    async fn start(
        backend: Backend,
        config: Config,
        dir: std::sync::Arc<tempfile::TempDir>,
        pg: Option<std::sync::Arc<TempPgDatabase>>,
    ) -> TestApp {
        let app = App::build(config.clone()).await.expect("app builds");
        let port = app.port();
        let shop_url = app.shop_url().map(|url| url.to_string());
        let metrics_port = app.metrics_port();
        let state = app.state().clone();
        let shutdown = app.shutdown_handle();
        let server = tokio::spawn(app.run_until_stopped());
        TestApp {
            backend,
            address: format!("http://127.0.0.1:{port}"),
            port,
            shop_url,
            metrics_port,
            state,
            config,
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .expect("client"),
            shutdown,
            server: Some(server),
            _dir: dir,
            _pg: pg,
        }
    }

    /// Stops the server gracefully and waits for it.
    pub async fn stop(mut self) {
        self.shutdown.trigger();
        if let Some(server) = self.server.take() {
            let _ = tokio::time::timeout(Duration::from_secs(15), server).await;
        }
    }

    pub fn shutdown_handle(&self) -> supportdesk::app::ShutdownHandle {
        self.shutdown.clone()
    }

    /// Whether the server has stopped (after a shutdown was triggered).
    pub fn has_stopped(&self) -> bool {
        self.server
            .as_ref()
            .is_none_or(|server| server.is_finished())
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    /// The app's Postgres pool; panics on a SQLite app.
    pub fn postgres_pool(&self) -> &supportdesk::db::pool::Pool<sqlx::Postgres> {
        let supportdesk::db::Db::Postgres(pool) = &self.state.db else {
            panic!("a Postgres app");
        };
        pool
    }

    /// A company with an entity and an all-scopes TEST key.
    pub async fn company(&self) -> TestCompany {
        let db = &self.state.db;
        let company = supportdesk::companies::store::create(db, "Acme", self.state.clock.now())
            .await
            .expect("company");
        let entity = supportdesk::entities::store::create(
            db,
            company.id,
            "Main",
            None,
            self.state.clock.now(),
        )
        .await
        .expect("entity");
        let key = self.key(company.id, Mode::Test, ScopeSet::all()).await;
        TestCompany {
            company,
            entity,
            key,
        }
    }

    /// A new key of `company_id` with `scopes`.
    pub async fn key(&self, company_id: uuid::Uuid, mode: Mode, scopes: ScopeSet) -> String {
        self.key_with(company_id, mode, scopes, 1000).await
    }

    pub async fn key_with(
        &self,
        company_id: uuid::Uuid,
        mode: Mode,
        scopes: ScopeSet,
        rate_limit: i64,
    ) -> String {
        let (_, key) = supportdesk::keys::store::create(
            &self.state.db,
            NewKey {
                company_id,
                name: "test key".into(),
                mode,
                scopes,
                rate_limit,
                expires_at: None,
            },
            self.state.clock.now(),
        )
        .await
        .expect("key");
        key
    }

    /// A request to `/api/v1{path}` with `key` (if any).
    pub fn api(&self, method: Method, path: &str, key: Option<&str>) -> reqwest::RequestBuilder {
        let builder = self
            .client
            .request(method, self.url(&format!("/api/v1{path}")));
        match key {
            Some(key) => builder.header("X-API-Key", key),
            None => builder,
        }
    }

    pub async fn get(&self, path: &str, key: &str) -> TestResponse {
        TestResponse::from(self.api(Method::GET, path, Some(key)).send().await).await
    }

    pub async fn delete(&self, path: &str, key: &str) -> TestResponse {
        TestResponse::from(self.api(Method::DELETE, path, Some(key)).send().await).await
    }

    pub async fn post(&self, path: &str, key: &str, body: Value) -> TestResponse {
        TestResponse::from(
            self.api(Method::POST, path, Some(key))
                .json(&body)
                .send()
                .await,
        )
        .await
    }

    pub async fn patch(&self, path: &str, key: &str, body: Value) -> TestResponse {
        TestResponse::from(
            self.api(Method::PATCH, path, Some(key))
                .json(&body)
                .send()
                .await,
        )
        .await
    }

    pub async fn put(&self, path: &str, key: &str, body: Value) -> TestResponse {
        TestResponse::from(
            self.api(Method::PUT, path, Some(key))
                .json(&body)
                .send()
                .await,
        )
        .await
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.shutdown.trigger();
        if let Some(server) = self.server.take() {
            server.abort();
        }
    }
}

/// Data of the company's `ticket.updated` events, oldest first.
pub async fn updated_events(app: &TestApp, company_id: uuid::Uuid) -> Vec<Value> {
    let rows = supportdesk::on_db!(&app.state.db, c => sqlx::query_as::<_, (sqlx::types::Json<Value>,)>(
        "SELECT data FROM events WHERE company_id = $1 AND name = 'ticket.updated' \
         ORDER BY created_at, id")
        .bind(company_id)
        .fetch_all(c)
        .await
        .expect("events read"));
    rows.into_iter().map(|(data,)| data.0).collect()
}
