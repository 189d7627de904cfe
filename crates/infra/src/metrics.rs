//! Prometheus metrics (docs/operations.md, "Metrics"): the recorder, the
//! names, and one small call per place that records.
//!
//! Recording is off unless `SUPPORTDESK_METRICS_BIND` is set: then
//! [`install`] puts the `metrics-exporter-prometheus` recorder in place for
//! the process and the service's `metrics::server` serves `GET /metrics` on
//! that address (the exporter's own HTTP listener is not used: ours shares
//! the service's shutdown). While off, every helper here costs one atomic
//! load. The per-route series and the sampled gauges, which know the
//! service's routes and queue, live with the service (`metrics::http`,
//! `metrics::sample`).
//!
//! Label values come from closed sets only (route templates, enums below),
//! so the number of series is bounded whatever the traffic. Handles of
//! fixed series are made once ([`Handles`]), so recording allocates
//! nothing; the per-route and per-store series are cached on first use
//! (`http`, `db`).
//!
//! The recorder is global: nodes are processes, one per recorder. Tests
//! that start several apps in one process share its series.

use std::sync::OnceLock;
use std::time::Duration;

use metrics::{Counter, Gauge, Histogram};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

pub use crate::db::timing::QueryTimer;

/// Every metric the service exports (docs/operations.md lists them).
pub mod names {
    pub const HTTP_REQUESTS: &str = "http_requests_total";
    pub const HTTP_DURATION: &str = "http_request_duration_seconds";
    pub const WS_CONNECTIONS: &str = "ws_connections";
    pub const WS_FRAMES_SENT: &str = "ws_frames_sent_total";
    pub const WS_FANOUT_DURATION: &str = "ws_fanout_duration_seconds";
    pub const WS_CLOSED: &str = "ws_closed_total";
    pub const OUTBOX_JOBS: &str = "outbox_jobs";
    pub const OUTBOX_OLDEST_DUE_AGE: &str = "outbox_oldest_due_age_seconds";
    pub const WEBHOOK_DELIVERIES: &str = "webhook_deliveries_total";
    pub const WEBHOOK_DURATION: &str = "webhook_delivery_duration_seconds";
    pub const EMAILS: &str = "emails_total";
    pub const RATELIMIT_REJECTIONS: &str = "ratelimit_rejections_total";
    pub const DB_POOL_CONNECTIONS: &str = "db_pool_connections";
    pub use crate::db::timing::DB_QUERY_DURATION;
    pub const REDIS_ERRORS: &str = "redis_errors_total";
    pub const PRESENCE_ONLINE_AGENTS: &str = "presence_online_agents";
    pub const BUILD_INFO: &str = "build_info";

    /// All of them, for tests and docs checks.
    pub const ALL: [&str; 17] = [
        HTTP_REQUESTS,
        HTTP_DURATION,
        WS_CONNECTIONS,
        WS_FRAMES_SENT,
        WS_FANOUT_DURATION,
        WS_CLOSED,
        OUTBOX_JOBS,
        OUTBOX_OLDEST_DUE_AGE,
        WEBHOOK_DELIVERIES,
        WEBHOOK_DURATION,
        EMAILS,
        RATELIMIT_REJECTIONS,
        DB_POOL_CONNECTIONS,
        DB_QUERY_DURATION,
        REDIS_ERRORS,
        PRESENCE_ONLINE_AGENTS,
        BUILD_INFO,
    ];
}

/// Histogram buckets in seconds: from a cached read (1 ms) to a webhook
/// timeout (10 s).
const BUCKETS: [f64; 13] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

static RECORDER: OnceLock<Result<PrometheusHandle, String>> = OnceLock::new();
static HANDLES: OnceLock<Handles> = OnceLock::new();

/// Installs the process's recorder (once; later calls return the same
/// handle) and registers every fixed series at zero, so a scrape shows
/// each metric before its first event.
pub fn install() -> anyhow::Result<&'static PrometheusHandle> {
    let installed = RECORDER.get_or_init(|| {
        let recorder = PrometheusBuilder::new()
            .set_buckets(&BUCKETS)
            .map_err(|e| e.to_string())?
            .build_recorder();
        let handle = recorder.handle();
        metrics::set_global_recorder(recorder).map_err(|e| e.to_string())?;
        Ok(handle)
    });
    let handle = installed
        .as_ref()
        .map_err(|error| anyhow::anyhow!("metrics recorder: {error}"))?;
    HANDLES.get_or_init(Handles::register);
    crate::db::timing::enable();
    Ok(handle)
}

/// The fixed series, when recording is on.
fn handles() -> Option<&'static Handles> {
    HANDLES.get()
}

/// Whether recording is on (the recorder is installed).
pub fn enabled() -> bool {
    HANDLES.get().is_some()
}

/// `build_info{version,backend} 1` for this node.
pub fn build_info(backend: crate::db::Backend) {
    if enabled() {
        let backend = match backend {
            crate::db::Backend::Postgres => "postgres",
            crate::db::Backend::Sqlite => "sqlite",
        };
        metrics::gauge!(names::BUILD_INFO, "version" => env!("CARGO_PKG_VERSION"), "backend" => backend)
            .set(1.0);
    }
}

/// The limiters whose refusals are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limiter {
    /// An API key's requests per window (REST and agent sockets).
    ApiKey,
    /// Failed authentications per client address.
    AuthFailures,
    /// Socket `message` frames per visitor session.
    VisitorMessages,
    /// Uploads per visitor session.
    VisitorUploads,
    /// The widget's per-address limits.
    Widget,
    /// Client frames of any kind per socket.
    SocketFrames,
}

impl Limiter {
    const ALL: [Limiter; 6] = [
        Limiter::ApiKey,
        Limiter::AuthFailures,
        Limiter::VisitorMessages,
        Limiter::VisitorUploads,
        Limiter::Widget,
        Limiter::SocketFrames,
    ];

    fn as_str(self) -> &'static str {
        match self {
            Limiter::ApiKey => "api_key",
            Limiter::AuthFailures => "auth_failures",
            Limiter::VisitorMessages => "visitor_messages",
            Limiter::VisitorUploads => "visitor_uploads",
            Limiter::Widget => "widget",
            Limiter::SocketFrames => "socket_frames",
        }
    }
}

/// How a socket ended, for `ws_closed_total{reason}`.
const WS_CLOSE_REASONS: [&str; 6] = [
    "client",
    "gone",
    "too_slow",
    "shutdown",
    "unauthorized",
    "forbidden",
];

/// How one webhook attempt ended.
const WEBHOOK_OUTCOMES: [&str; 3] = ["delivered", "retry", "failed"];
/// How one email attempt ended.
const EMAIL_OUTCOMES: [&str; 3] = ["sent", "retry", "failed"];
/// `db_pool_connections{state}`.
const POOL_STATES: [&str; 3] = ["idle", "in_use", "max"];

/// Handles of every series whose labels are known up front.
struct Handles {
    ws_agents: Gauge,
    ws_visitors: Gauge,
    ws_frames_sent: Counter,
    ws_fanout: Histogram,
    ws_closed: [Counter; 6],
    webhook: [Counter; 3],
    webhook_duration: Histogram,
    emails: [Counter; 3],
    ratelimit: [Counter; Limiter::ALL.len()],
    redis_errors: Counter,
}

impl Handles {
    fn register() -> Handles {
        let gauge = |kind: &'static str| metrics::gauge!(names::WS_CONNECTIONS, "kind" => kind);
        let handles = Handles {
            ws_agents: gauge("agent"),
            ws_visitors: gauge("visitor"),
            ws_frames_sent: metrics::counter!(names::WS_FRAMES_SENT),
            ws_fanout: metrics::histogram!(names::WS_FANOUT_DURATION),
            ws_closed: WS_CLOSE_REASONS
                .map(|reason| metrics::counter!(names::WS_CLOSED, "reason" => reason)),
            webhook: WEBHOOK_OUTCOMES
                .map(|outcome| metrics::counter!(names::WEBHOOK_DELIVERIES, "outcome" => outcome)),
            webhook_duration: metrics::histogram!(names::WEBHOOK_DURATION),
            emails: EMAIL_OUTCOMES
                .map(|outcome| metrics::counter!(names::EMAILS, "outcome" => outcome)),
            ratelimit: Limiter::ALL.map(|limiter| {
                metrics::counter!(names::RATELIMIT_REJECTIONS, "limiter" => limiter.as_str())
            }),
            redis_errors: metrics::counter!(names::REDIS_ERRORS),
        };
        // Set at each scrape (`sample`); registered now so they show at zero.
        metrics::gauge!(names::PRESENCE_ONLINE_AGENTS).set(0.0);
        for state in POOL_STATES {
            metrics::gauge!(names::DB_POOL_CONNECTIONS, "state" => state).set(0.0);
        }
        // Registered series render at zero; counters need one touch.
        handles.ws_frames_sent.increment(0);
        handles.redis_errors.increment(0);
        for counter in handles
            .ws_closed
            .iter()
            .chain(&handles.webhook)
            .chain(&handles.emails)
            .chain(&handles.ratelimit)
        {
            counter.increment(0);
        }
        handles
    }
}

/// One open socket of an agent (`visitor` false) or a visitor: counted in
/// `ws_connections` until dropped.
pub struct OpenSocket {
    visitor: bool,
}

/// Counts a socket as open until the returned guard is dropped.
pub fn ws_opened(visitor: bool) -> OpenSocket {
    if let Some(h) = handles() {
        h.ws_gauge(visitor).increment(1.0);
    }
    OpenSocket { visitor }
}

impl Handles {
    fn ws_gauge(&self, visitor: bool) -> &Gauge {
        if visitor {
            &self.ws_visitors
        } else {
            &self.ws_agents
        }
    }
}

impl Drop for OpenSocket {
    fn drop(&mut self) {
        if let Some(h) = handles() {
            h.ws_gauge(self.visitor).decrement(1.0);
        }
    }
}

/// Frames written to a socket.
pub fn ws_frames_sent(count: u64) {
    if let Some(h) = handles() {
        h.ws_frames_sent.increment(count);
    }
}

/// Times one event's fan-out to this node's sockets (recorded on drop).
pub fn ws_fanout_timer() -> Option<Timer> {
    handles().map(|h| Timer::start(&h.ws_fanout))
}

/// A socket ended: the close code the server sent (`None` when it sent
/// none), and whether the peer closed it.
pub fn ws_closed(code: Option<u16>, by_peer: bool) {
    let Some(h) = handles() else { return };
    let reason = match (code, by_peer) {
        (_, true) => 0,
        (None, false) => 1,
        (Some(1013), _) => 2,
        (Some(1001), _) => 3,
        (Some(4401), _) => 4,
        (Some(_), _) => 5,
    };
    h.ws_closed[reason].increment(1);
}

/// One webhook attempt: delivered (2xx), to be retried, or given up; and
/// how long the HTTP exchange took.
pub fn webhook_attempt(delivered: bool, retried: bool, took: Duration) {
    let Some(h) = handles() else { return };
    let outcome = match (delivered, retried) {
        (true, _) => 0,
        (false, true) => 1,
        (false, false) => 2,
    };
    h.webhook[outcome].increment(1);
    h.webhook_duration.record(took.as_secs_f64());
}

/// One email attempt: sent, to be retried, or given up.
pub fn email_attempt(sent: bool, retried: bool) {
    let Some(h) = handles() else { return };
    let outcome = match (sent, retried) {
        (true, _) => 0,
        (false, true) => 1,
        (false, false) => 2,
    };
    h.emails[outcome].increment(1);
}

/// A request or frame refused by `limiter`.
pub fn rate_limited(limiter: Limiter) {
    if let Some(h) = handles() {
        // The variants are declared in the order of `Limiter::ALL`.
        h.ratelimit[limiter as usize].increment(1);
    }
}

/// A Redis command that failed (connection lost, timeout, error reply).
pub fn redis_error() {
    if let Some(h) = handles() {
        h.redis_errors.increment(1);
    }
}

/// Records the time since its start into a histogram when dropped.
pub struct Timer {
    histogram: Histogram,
    started: std::time::Instant,
}

impl Timer {
    fn start(histogram: &Histogram) -> Timer {
        Timer {
            histogram: histogram.clone(),
            started: std::time::Instant::now(),
        }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        self.histogram.record(self.started.elapsed().as_secs_f64());
    }
}
