//! Helpers for the outbound tests: a real HTTP receiver on 127.0.0.1:0,
//! signature checks written the way a receiver would write them, and a
//! driver that runs the outbox worker step by step.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use supportdesk::auth::{Mode, Tenant};
use supportdesk::users::store::NewUser;

use crate::support::{TestApp, TestCompany, eventually_within};

/// Shortened retry delays: five attempts in a fraction of a second.
pub fn fast_retries(config: &mut supportdesk::Config) {
    config.webhook_retry_delays = vec![Duration::from_millis(50); 4];
    config.run_workers = false;
}

/// What the receiver answers to its n-th request (1-based).
#[derive(Clone, Copy, Debug)]
pub enum Reply {
    Status(u16),
    /// A status with a long body (to check truncation).
    LongBody(u16),
    /// Never answers (until the client gives up).
    Hang,
    /// Answers `status` after a pause.
    Slow(Duration, u16),
    /// A redirect to another path of the receiver.
    Redirect,
}

#[derive(Clone, Debug)]
pub struct Hit {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Hit {
    #[track_caller]
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_else(|| panic!("header {name} missing"))
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("JSON body")
    }
}

type Plan = Arc<dyn Fn(usize) -> Reply + Send + Sync>;

#[derive(Clone)]
struct Shared {
    hits: Arc<Mutex<Vec<Hit>>>,
    plan: Plan,
}

/// An HTTP server that records every request and answers per a plan.
pub struct Receiver {
    pub port: u16,
    /// `http://127.0.0.1:PORT`
    pub base: String,
    hits: Arc<Mutex<Vec<Hit>>>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl Receiver {
    pub async fn start(plan: impl Fn(usize) -> Reply + Send + Sync + 'static) -> Receiver {
        let shared = Shared {
            hits: Arc::new(Mutex::new(Vec::new())),
            plan: Arc::new(plan),
        };
        let hits = shared.hits.clone();
        let app = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap, body: Bytes| {
            let shared = shared.clone();
            async move { answer(shared, uri, headers, body).await }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind receiver");
        let port = listener.local_addr().expect("addr").port();
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver {
            port,
            base: format!("http://127.0.0.1:{port}"),
            hits,
            server,
        }
    }

    /// Always answers `status`.
    pub async fn always(status: u16) -> Receiver {
        Self::start(move |_| Reply::Status(status)).await
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn hits(&self) -> Vec<Hit> {
        self.hits.lock().expect("hits").clone()
    }

    pub fn count(&self) -> usize {
        self.hits.lock().expect("hits").len()
    }
}

async fn answer(shared: Shared, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let n = {
        let mut hits = shared.hits.lock().expect("hits");
        hits.push(Hit {
            path: uri.path().to_string(),
            headers,
            body,
        });
        hits.len()
    };
    match (shared.plan)(n) {
        Reply::Status(code) => status(code).into_response(),
        Reply::LongBody(code) => (status(code), "x".repeat(5000)).into_response(),
        Reply::Hang => {
            tokio::time::sleep(Duration::from_secs(600)).await;
            StatusCode::OK.into_response()
        }
        Reply::Slow(pause, code) => {
            tokio::time::sleep(pause).await;
            status(code).into_response()
        }
        Reply::Redirect => (StatusCode::FOUND, [("location", "/elsewhere")]).into_response(),
    }
}

fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).expect("status code")
}

/// How long the outbound tests wait for the outbox: a delivery's attempts
/// follow real (if shortened) retry delays, on a machine shared with the
/// other tests.
pub const DELIVERED_WITHIN: Duration = Duration::from_secs(30);

/// Runs the outbox worker step by step until `done` holds.
pub async fn drive_until(app: &TestApp, what: &str, mut done: impl FnMut() -> bool) {
    drive_state_until(&app.state, what, &mut done).await
}

pub async fn drive_state_until(
    state: &supportdesk::AppState,
    what: &str,
    done: &mut dyn FnMut() -> bool,
) {
    eventually_within(what, DELIVERED_WITHIN, async || {
        supportdesk::outbox::run_due(&state.jobs, &state.db, &state.clock).await;
        done()
    })
    .await
}

/// Polls `check` (an async condition on the API) while driving the worker.
pub async fn drive_until_api(app: &TestApp, what: &str, mut check: impl AsyncFnMut() -> bool) {
    eventually_within(what, DELIVERED_WITHIN, async || {
        supportdesk::outbox::run_due(&app.state.jobs, &app.state.db, &app.state.clock).await;
        check().await
    })
    .await
}

/// Drives the worker until no webhook delivery is left to attempt (each
/// one done or given up), so that nothing else can be sent afterwards.
pub async fn settle(app: &TestApp) {
    drive_until_api(app, "every webhook delivery ended", async || {
        let pending: i64 = supportdesk::db::Query::new(
            "SELECT COUNT(*) FROM outbox_jobs WHERE kind = $1 AND status = 'pending'",
        )
        .bind(supportdesk::webhooks::JOB_KIND)
        .fetch_scalar(&app.state.db)
        .await
        .expect("pending deliveries");
        pending == 0
    })
    .await
}

pub fn tenant(acme: &TestCompany, mode: Mode) -> Tenant {
    Tenant::new(acme.company.id, mode)
}

/// Creates a webhook through the API; returns its id and secret.
pub async fn create_webhook(
    app: &TestApp,
    key: &str,
    url: &str,
    events: &[&str],
) -> (String, String) {
    let r = app
        .post(
            "/company/webhooks",
            key,
            json!({"name": "Receiver", "url": url, "events": events}),
        )
        .await;
    let body = r.assert_status(201);
    (
        body["id"].as_str().expect("id").to_string(),
        body["secret"].as_str().expect("secret").to_string(),
    )
}

/// Emits `user.created` by creating a user (the way the users API does).
pub async fn create_user(app: &TestApp, tenant: &Tenant, name: &str) -> uuid::Uuid {
    let user = supportdesk::users::store::create(
        &app.state.db,
        tenant,
        NewUser {
            id: None,
            name: name.to_string(),
            email: format!("{}@example.com", uuid::Uuid::new_v4().simple()),
            role: supportdesk::users::Role::Agent.into(),
        },
        app.state.clock.now(),
    )
    .await
    .expect("user created");
    user.id
}

/// The webhook's delivery log (first page).
pub async fn deliveries(app: &TestApp, key: &str, webhook: &str) -> Vec<Value> {
    let r = app
        .get(&format!("/company/webhooks/{webhook}/deliveries"), key)
        .await;
    r.assert_status(200)["data"]
        .as_array()
        .expect("data")
        .clone()
}

/// `X-Service-Signature` checked as docs/api.md tells receivers to: hex
/// HMAC-SHA256 of the raw body keyed with the secret, compared in constant
/// time (`verify_slice`).
pub fn service_signature_valid(secret: &str, body: &[u8], header: &str) -> bool {
    let Some(hex_sig) = header.strip_prefix("sha256=") else {
        return false;
    };
    let Ok(sig) = hex::decode(hex_sig) else {
        return false;
    };
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes()).expect("key");
    mac.update(body);
    mac.verify_slice(&sig).is_ok()
}

/// A Standard Webhooks verifier: key = base64 after `whsec_`, message =
/// `id.timestamp.body`, any `v1,` signature of the header may match.
pub fn standard_signature_valid(secret: &str, hit: &Hit) -> bool {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").expect("whsec_ prefix"))
        .expect("base64 secret");
    let id = hit.header("webhook-id");
    let timestamp = hit.header("webhook-timestamp");
    hit.header("webhook-signature").split(' ').any(|sig| {
        let Some(b64) = sig.strip_prefix("v1,") else {
            return false;
        };
        let Ok(sig) = STANDARD.decode(b64) else {
            return false;
        };
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&key).expect("key");
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.as_bytes());
        mac.update(b".");
        mac.update(&hit.body);
        mac.verify_slice(&sig).is_ok()
    })
}
