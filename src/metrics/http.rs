//! `http_requests_total{method,route,status}` and
//! `http_request_duration_seconds{method,route}`, by route template: the
//! axum `MatchedPath` (`/api/v1/tickets/{id}`), or `unmatched` for a
//! request no route took, so ids in paths never become labels.
//!
//! `track` wraps every route of the service (`app::layered`). The API's
//! catch-all route counts as `unmatched` too. The handles of a (route,
//! method, status) are made on its first request and looked up by the
//! template afterwards: no allocation per request.

use std::sync::LazyLock;
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use dashmap::DashMap;
use metrics::{Counter, Histogram};
use rustc_hash::FxBuildHasher;

use super::names;
use crate::router::API_CATCH_ALL;

const UNMATCHED: &str = "unmatched";

/// Methods outside this set share one label, so a client inventing
/// methods cannot add series.
const METHODS: [Method; 7] = [
    Method::GET,
    Method::POST,
    Method::PUT,
    Method::PATCH,
    Method::DELETE,
    Method::HEAD,
    Method::OPTIONS,
];
const METHOD_LABELS: [&str; 8] = [
    "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "OTHER",
];

fn method_index(method: &Method) -> usize {
    METHODS
        .iter()
        .position(|m| m == method)
        .unwrap_or(METHODS.len())
}

/// The series of one route template.
#[derive(Default)]
struct RouteSeries {
    /// By method index and status.
    requests: Vec<(usize, u16, Counter)>,
    /// By method index.
    durations: Vec<(usize, Histogram)>,
}

impl RouteSeries {
    fn find(&self, method: usize, status: u16) -> Option<(&Counter, &Histogram)> {
        let counter = self
            .requests
            .iter()
            .find(|(m, s, _)| *m == method && *s == status)?;
        let histogram = self.durations.iter().find(|(m, _)| *m == method)?;
        Some((&counter.2, &histogram.1))
    }

    fn add(&mut self, route: &str, method: usize, status: u16) {
        let method_label = METHOD_LABELS[method];
        if !self.durations.iter().any(|(m, _)| *m == method) {
            let histogram = metrics::histogram!(
                names::HTTP_DURATION,
                "method" => method_label,
                "route" => route.to_owned()
            );
            self.durations.push((method, histogram));
        }
        if !self
            .requests
            .iter()
            .any(|(m, s, _)| *m == method && *s == status)
        {
            let counter = metrics::counter!(
                names::HTTP_REQUESTS,
                "method" => method_label,
                "route" => route.to_owned(),
                "status" => status.to_string()
            );
            self.requests.push((method, status, counter));
        }
    }
}

/// Keyed by route template, a closed set the service defines (never a
/// client's path), so a fast hash without flood resistance is safe: the
/// default SipHash of the template was the largest single cost of
/// recording a request.
static ROUTES: LazyLock<DashMap<Box<str>, RouteSeries, FxBuildHasher>> =
    LazyLock::new(|| DashMap::with_hasher(FxBuildHasher));

fn record(route: &str, method: usize, status: u16, seconds: f64) {
    if let Some(series) = ROUTES.get(route)
        && let Some((counter, histogram)) = series.find(method, status)
    {
        counter.increment(1);
        histogram.record(seconds);
        return;
    }
    let mut series = ROUTES.entry(route.into()).or_default();
    series.add(route, method, status);
    if let Some((counter, histogram)) = series.find(method, status) {
        counter.increment(1);
        histogram.record(seconds);
    }
}

/// Counts and times every request (outermost per-route layer).
pub async fn track(request: Request, next: Next) -> Response {
    if !super::enabled() {
        return next.run(request).await;
    }
    let started = Instant::now();
    let method = method_index(request.method());
    let matched = request.extensions().get::<MatchedPath>().cloned();
    let response = next.run(request).await;
    let route = match matched.as_ref().map(MatchedPath::as_str) {
        Some(API_CATCH_ALL) | None => UNMATCHED,
        Some(path) => path,
    };
    record(
        route,
        method,
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}
