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
mod oversized;
mod plan;
mod poll;
mod standing;
mod template;

pub use empty::EmptyDatabase;
pub use oversized::{post_refused_body, post_unfinished_body};
pub use plan::plan;
pub use poll::{eventually, eventually_within};

use reqwest::Method;
use serde_json::Value;
use supportdesk::auth::{Mode, ScopeSet};
use supportdesk::companies::Company;
use supportdesk::entities::Entity;
use supportdesk::keys::NewKey;
use supportdesk::{App, AppState, Config};
use tokio::task::JoinHandle;

#[macro_export]
macro_rules! backend_tests {
    ($($name:ident),+ $(,)?) => {
        $(
            mod $name {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    super::$name($crate::support::Backend::Sqlite).await
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    if let Some(backend) =
                        $crate::support::Backend::postgres(concat!(module_path!(), "::postgres"))
                    {
                        super::$name(backend).await
                    }
                }
            }
        )+
    };
}

/// Postgres-only tests, for what SQLite cannot show (concurrent writers,
/// a server cutting connections): skipped without Postgres, failed in CI.
#[macro_export]
macro_rules! postgres_tests {
    ($($name:ident),+ $(,)?) => {
        $(
            mod $name {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    if let Some(backend) =
                        $crate::support::Backend::postgres(concat!(module_path!(), "::postgres"))
                    {
                        super::$name(backend).await
                    }
                }
            }
        )+
    };
}

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

/// A Postgres database created for one test and dropped after it.
struct TempPgDatabase {
    admin_url: String,
    name: String,
}

impl TempPgDatabase {
    async fn create() -> (TempPgDatabase, String) {
        let admin_url = std::env::var("TEST_DATABASE_URL").expect("TEST_DATABASE_URL");
        let name = format!(
            "{DB_PREFIX}{}_{}",
            unix_secs(),
            uuid::Uuid::new_v4().simple()
        );
        let template = template::postgres(&admin_url).await;
        let mut conn = pg_admin(&admin_url).await;
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "CREATE DATABASE {name} TEMPLATE {template}"
        )))
        .execute(&mut conn)
        .await
        .expect("create test database");
        // A commit here waits about 4 ms for its WAL flush; the tests never
        // crash this server (the outage tests start a Postgres of their
        // own), so they do not wait for durability they cannot observe.
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "ALTER DATABASE {name} SET synchronous_commit = off"
        )))
        .execute(&mut conn)
        .await
        .expect("set the test database's commits asynchronous");
        let url = replace_database(&admin_url, &name);
        (TempPgDatabase { admin_url, name }, url)
    }
}

async fn pg_admin(url: &str) -> sqlx::PgConnection {
    use sqlx::Connection;
    sqlx::PgConnection::connect(url)
        .await
        .expect("connect to TEST_DATABASE_URL")
}

/// A test's database is named `sdt_<unix seconds>_<uuid>`: the seconds let a
/// later run drop what an earlier one left behind.
const DB_PREFIX: &str = "sdt_";

fn unix_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or(0)
}

impl Drop for TempPgDatabase {
    /// Drops the database on a thread of its own that the test does not
    /// wait for: `DROP DATABASE` waits for a checkpoint (1.5 to 3.7 s here
    /// with other tests writing), which each Postgres test otherwise spent
    /// idle at its end. The drops still running when the test process
    /// exits leave their databases behind; the next run's first Postgres
    /// test drops those (`drop_left_behind`).
    fn drop(&mut self) {
        let admin_url = self.admin_url.clone();
        let name = self.name.clone();
        // Drop runs inside the test's runtime: the thread has its own.
        std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                let mut conn = pg_admin(&admin_url).await;
                let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
                    "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
                )))
                .execute(&mut conn)
                .await;
            });
        });
    }
}

/// Drops the test databases an earlier test process left behind (created
/// over an hour ago: a test process running beside this one keeps its own).
pub(crate) async fn drop_left_behind(admin: &mut sqlx::PgConnection) {
    let names: Vec<String> =
        sqlx::query_scalar("SELECT datname FROM pg_database WHERE datname LIKE 'sdt\\_%'")
            .fetch_all(&mut *admin)
            .await
            .unwrap_or_default();
    let hour_ago = unix_secs().saturating_sub(3600);
    for name in names {
        let created = name
            .strip_prefix(DB_PREFIX)
            .and_then(|rest| rest.split_once('_'))
            .and_then(|(secs, _)| secs.parse::<u64>().ok());
        if created.is_some_and(|secs| secs < hour_ago) {
            let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
            )))
            .execute(&mut *admin)
            .await;
        }
    }
}

/// `postgres://u@h:5432/test?x=y` with its database replaced by `name`.
pub fn replace_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map(|i| i + 3).unwrap_or(0);
    let host_part = match base[scheme_end..].find('/') {
        Some(slash) => &base[..scheme_end + slash],
        None => base,
    };
    match query {
        Some(q) => format!("{host_part}/{name}?{q}"),
        None => format!("{host_part}/{name}"),
    }
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

/// A response read whole: status, headers and the body as JSON (Null if
/// the body is not JSON; `text` keeps it raw).
#[derive(Debug)]
pub struct TestResponse {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
    pub body: Value,
}

impl TestResponse {
    pub async fn from(result: reqwest::Result<reqwest::Response>) -> TestResponse {
        let response = result.expect("request sent");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.expect("body read");
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        TestResponse {
            status,
            headers,
            text,
            body,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts the error shape of docs/api.md ("Errors") with this status and code.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "status of {}", self.text);
        assert_eq!(self.body["code"], code, "code of {}", self.text);
        assert_eq!(self.body["status"], status, "status field of {}", self.text);
        assert!(
            self.body["error"].is_string(),
            "error message in {}",
            self.text
        );
        assert_eq!(
            self.header("content-type"),
            Some("application/json"),
            "content type of {}",
            self.text
        );
    }

    #[track_caller]
    pub fn assert_status(&self, status: u16) -> &Value {
        assert_eq!(self.status, status, "status of {}", self.text);
        &self.body
    }
}

/// Asserts a 400 `validation_failed` whose details name exactly `fields`,
/// in that order.
#[track_caller]
pub fn assert_invalid(r: &TestResponse, fields: &[&str]) {
    r.assert_error(400, "validation_failed");
    let named: Vec<&str> = r.body["details"]
        .as_array()
        .expect("details")
        .iter()
        .map(|d| d["field"].as_str().expect("field"))
        .collect();
    assert_eq!(named, fields, "{}", r.text);
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

/// Locks the row `lock` selects (a `SELECT … FOR UPDATE` whose one
/// parameter is `id`) in a transaction of its own, then sends `request` and
/// returns once a session waits for a lock: the request, held until the
/// returned transaction ends.
pub async fn send_behind_a_row_lock(
    pool: &sqlx::PgPool,
    lock: &'static str,
    id: uuid::Uuid,
    request: reqwest::RequestBuilder,
) -> (
    sqlx::Transaction<'static, sqlx::Postgres>,
    JoinHandle<TestResponse>,
) {
    let mut holder = pool.begin().await.expect("begin");
    sqlx::query(lock)
        .bind(id)
        .fetch_one(&mut *holder)
        .await
        .expect("lock the row");
    let held = tokio::spawn(async move { TestResponse::from(request.send().await).await });
    wait_for_a_lock_wait(pool, &held).await;
    (holder, held)
}

/// `send_behind_a_row_lock` on the ticket counter of `company_id`: a
/// create of that company (`request`) waits for its number.
pub async fn send_behind_the_ticket_counter(
    pool: &sqlx::PgPool,
    company_id: uuid::Uuid,
    request: reqwest::RequestBuilder,
) -> (
    sqlx::Transaction<'static, sqlx::Postgres>,
    JoinHandle<TestResponse>,
) {
    let lock = "SELECT value FROM counters WHERE company_id = $1 AND name = 'ticket' FOR UPDATE";
    send_behind_a_row_lock(pool, lock, company_id, request).await
}

/// Returns once a session of the test database waits for a lock (the one
/// `request` runs in, which must not finish before that).
async fn wait_for_a_lock_wait(
    pool: &sqlx::PgPool,
    request: &tokio::task::JoinHandle<TestResponse>,
) {
    eventually("a session waits for a lock", async || {
        assert!(
            !request.is_finished(),
            "the request finished without waiting for a lock"
        );
        let waiting: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM pg_stat_activity \
             WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
        .fetch_one(pool)
        .await
        .expect("pg_stat_activity");
        waiting > 0
    })
    .await
}
