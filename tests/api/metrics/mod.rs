//! Prometheus metrics on `SUPPORTDESK_METRICS_BIND` (docs/operations.md,
//! "Metrics"): the exposition parses, every metric is there after requests
//! of each kind, labels stay bounded, and the dashboard and alert rules in
//! docs/ read only metrics the service exports.
//!
//! The recorder is one per process, so the tests of this binary share its
//! series: assertions look at series these tests cause, never at totals.

mod text_format;

use futures::StreamExt;
use serde_json::{Value, json};
use supportdesk::auth::{Mode, ScopeSet};
use supportdesk::metrics::names;

use crate::backend_tests;
use crate::chat::client::Client;
use crate::outbound::support::{Receiver, create_webhook, drive_until};
use crate::support::{Backend, TestApp};
use text_format::{Exposition, parse, promql_metric_names};

backend_tests!(
    metrics_parse_as_prometheus_text,
    every_metric_is_present_after_requests_of_each_kind,
    label_sets_stay_bounded_after_requests_to_many_ticket_ids,
    the_grafana_dashboard_reads_only_exported_metrics,
    the_alert_rules_read_only_exported_metrics,
);

/// An app with its metrics listener on a free port.
async fn spawn(backend: Backend) -> TestApp {
    TestApp::spawn_with(backend, |config| {
        config.metrics_bind = Some("127.0.0.1:0".into());
    })
    .await
}

/// `GET /metrics`: the response's content type and body.
async fn scrape_raw(app: &TestApp) -> (String, String) {
    let port = app.metrics_port.expect("the metrics listener is on");
    let response = app
        .client
        .get(format!("http://127.0.0.1:{port}/metrics"))
        .send()
        .await
        .expect("scrape sent");
    assert_eq!(response.status().as_u16(), 200);
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    (content_type, response.text().await.expect("scrape read"))
}

async fn scrape(app: &TestApp) -> Exposition {
    let (_, text) = scrape_raw(app).await;
    parse(&text).unwrap_or_else(|error| panic!("{error}\n{text}"))
}

/// One request of each kind the metrics describe: REST reads and writes, a
/// rate-limited request, an agent socket that receives an event and
/// closes, a webhook delivery (through the outbox).
async fn requests_of_each_kind(app: &TestApp) {
    let acme = app.company().await;
    app.get("/tickets", &acme.key).await.assert_status(200);

    let limited = app
        .key_with(acme.company.id, Mode::Test, ScopeSet::all(), 1)
        .await;
    app.get("/tickets", &limited).await.assert_status(200);
    app.get("/tickets", &limited).await.assert_status(429);

    let receiver = Receiver::always(200).await;
    create_webhook(app, &acme.key, &receiver.url("/hook"), &["ticket.created"]).await;
    app.post(
        "/tickets",
        &acme.key,
        json!({"subject": "Refund", "entityId": acme.entity.id}),
    )
    .await
    .assert_status(201);

    let session = app
        .post(
            "/chat/sessions",
            &acme.key,
            json!({"entityId": acme.entity.id, "visitorEmail": "v@example.com"}),
        )
        .await
        .assert_status(201)
        .clone();
    let id = session["id"].as_str().expect("session id").to_string();
    let mut socket = Client::key(app, &acme.key).await;
    socket.subscribe(&format!("session:{id}")).await;
    app.post(
        &format!("/chat/sessions/{id}/messages"),
        &acme.key,
        json!({"body": "Hello", "senderType": "visitor"}),
    )
    .await
    .assert_status(201);
    // The session's own `chat.session` can reach a channel subscribed just
    // after it was created: the message is awaited past it.
    assert_eq!(socket.next_of("chat.message").await["type"], "chat.message");
    socket.ws.close(None).await.expect("socket closed");

    drive_until(app, "the webhook delivery", || receiver.count() >= 1).await;
}

async fn metrics_parse_as_prometheus_text(backend: Backend) {
    let app = spawn(backend).await;
    requests_of_each_kind(&app).await;
    let (content_type, text) = scrape_raw(&app).await;
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "content type {content_type}"
    );
    let exposition = parse(&text).unwrap_or_else(|error| panic!("{error}\n{text}"));
    assert!(!exposition.samples.is_empty(), "{text}");
}

async fn every_metric_is_present_after_requests_of_each_kind(backend: Backend) {
    let app = spawn(backend).await;
    requests_of_each_kind(&app).await;
    let exposition = scrape(&app).await;
    let missing: Vec<&str> = names::ALL
        .into_iter()
        .filter(|name| {
            let sample = match exposition.types.get(*name).map(String::as_str) {
                Some("histogram") => format!("{name}_count"),
                _ => name.to_string(),
            };
            exposition.series(&sample).is_empty()
        })
        .collect();
    assert!(missing.is_empty(), "missing: {missing:?}");
}

async fn label_sets_stay_bounded_after_requests_to_many_ticket_ids(backend: Backend) {
    let app = spawn(backend).await;
    let acme = app.company().await;
    let key = app
        .key_with(acme.company.id, Mode::Test, ScopeSet::all(), 1_000_000)
        .await;
    let ids: Vec<String> = (0..1000)
        .map(|_| uuid::Uuid::now_v7().to_string())
        .collect();
    futures::stream::iter(&ids)
        .map(|id| {
            let (app, key) = (&app, &key);
            async move { app.get(&format!("/tickets/{id}"), key).await.status }
        })
        .buffer_unordered(16)
        .for_each(|status| async move { assert_eq!(status, 404) })
        .await;

    let exposition = scrape(&app).await;
    let ticket_404s: Vec<_> = exposition
        .series(names::HTTP_REQUESTS)
        .into_iter()
        .filter(|s| {
            s.labels["method"] == "GET"
                && s.labels["status"] == "404"
                && s.labels["route"].starts_with("/api/v1/tickets/")
        })
        .collect();
    assert_eq!(ticket_404s.len(), 1, "{ticket_404s:?}");
    assert_eq!(ticket_404s[0].labels["route"], "/api/v1/tickets/{id}");
    assert!(ticket_404s[0].value >= 1000.0);
}

/// Metric names in `exprs` that the service does not export (a
/// histogram's `_bucket`, `_sum` and `_count` samples count as exported).
async fn unexported(backend: Backend, exprs: &[String]) -> Vec<String> {
    assert!(!exprs.is_empty(), "no expressions found");
    let app = spawn(backend).await;
    requests_of_each_kind(&app).await;
    let exposition = scrape(&app).await;
    let exported = exposition.sample_names();
    let mut missing: Vec<String> = exprs
        .iter()
        .flat_map(|expr| promql_metric_names(expr))
        .filter(|name| !exported.contains(name.as_str()))
        .collect();
    missing.dedup();
    missing
}

fn doc(name: &str) -> String {
    let path = format!("{}/docs/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every `expr` of a Grafana dashboard's panels (any depth).
fn dashboard_exprs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                match (key.as_str(), inner) {
                    ("expr", Value::String(expr)) => out.push(expr.clone()),
                    _ => dashboard_exprs(inner, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| dashboard_exprs(item, out)),
        _ => {}
    }
}

async fn the_grafana_dashboard_reads_only_exported_metrics(backend: Backend) {
    let dashboard: Value =
        serde_json::from_str(&doc("grafana-dashboard.json")).expect("the dashboard is JSON");
    let mut exprs = Vec::new();
    dashboard_exprs(&dashboard, &mut exprs);
    assert_eq!(unexported(backend, &exprs).await, Vec::<String>::new());
}

async fn the_alert_rules_read_only_exported_metrics(backend: Backend) {
    // Each rule's expression is on its `expr:` line (docs/alerts.yml keeps
    // them one line each for this).
    let exprs: Vec<String> = doc("alerts.yml")
        .lines()
        .filter_map(|line| line.trim().strip_prefix("expr:"))
        .map(|expr| expr.trim().to_string())
        .collect();
    assert_eq!(exprs.len(), 5, "five alert rules");
    assert_eq!(unexported(backend, &exprs).await, Vec::<String>::new());
}
