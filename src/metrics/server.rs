//! `GET /metrics` on its own listener (`SUPPORTDESK_METRICS_BIND`), kept off
//! the public port: operators expose it to their Prometheus only.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use metrics_exporter_prometheus::PrometheusHandle;

use crate::db::Db;
use crate::outbox::Jobs;
use crate::realtime::Realtime;

/// How often histogram samples are folded in when nobody scrapes (so they
/// do not pile up in memory).
const UPKEEP_INTERVAL: Duration = Duration::from_secs(5);

/// What a scrape reads: the store, the outbox's kinds, presence.
#[derive(Clone)]
struct Exporter {
    db: Db,
    jobs: Arc<Jobs>,
    realtime: Arc<Realtime>,
    handle: &'static PrometheusHandle,
}

/// The metrics listener's router.
pub fn router(
    db: Db,
    jobs: Arc<Jobs>,
    realtime: Arc<Realtime>,
    handle: &'static PrometheusHandle,
) -> Router {
    let exporter = Exporter {
        db,
        jobs,
        realtime,
        handle,
    };
    Router::new()
        .route("/metrics", get(scrape))
        .with_state(exporter)
}

/// The Prometheus text format, version 0.0.4.
async fn scrape(State(exporter): State<Exporter>) -> Response {
    super::sample::refresh(&exporter.db, &exporter.jobs, &exporter.realtime).await;
    let body = exporter.handle.render();
    let mut response = body.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}

/// Folds histogram samples in every few seconds until shutdown.
pub async fn run_upkeep(
    handle: &'static PrometheusHandle,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let mut ticker = tokio::time::interval(UPKEEP_INTERVAL);
    loop {
        tokio::select! {
            _ = ticker.tick() => handle.run_upkeep(),
            _ = shutdown.wait_for(|stop| *stop) => return,
        }
    }
}
