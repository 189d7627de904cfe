//! `GET /tickets?cf.…`: on a generated data set, each filter alone and
//! combined with status, priority and tags gives exactly the expected
//! tickets and `total`; bad filters are 400s on their parameter.

use std::collections::BTreeSet;

use futures::StreamExt;
use supportdesk::auth::{Mode, ScopeSet};

use super::*;

backend_tests!(
    field_filters_give_exactly_the_matching_tickets,
    bad_field_filters_are_400
);

/// How many tickets the data set has, and how many are created at once.
const TICKETS: usize = 2_000;
const AT_ONCE: usize = 8;

/// What the test gave ticket `i`.
#[derive(Debug, Clone)]
struct Seeded {
    id: String,
    plan: Option<&'static str>,
    order_total: Option<f64>,
    renewal: Option<String>,
    churned: Option<bool>,
    features: Vec<&'static str>,
    high: bool,
    vip: bool,
    resolved: bool,
}

fn seeded(i: usize) -> Seeded {
    let features = ["api", "sso", "audit"];
    Seeded {
        id: String::new(),
        plan: [Some("basic"), Some("pro"), None, Some("enterprise")][i % 4],
        order_total: (!i.is_multiple_of(5)).then(|| ((i * 37) % 1000) as f64 + 0.5),
        renewal: (!i.is_multiple_of(7))
            .then(|| format!("2026-{:02}-{:02}", i % 12 + 1, i % 28 + 1)),
        churned: [Some(true), Some(false), None][i % 3],
        features: features
            .iter()
            .enumerate()
            .filter(|(bit, _)| (i >> bit) & 1 == 1)
            .map(|(_, f)| *f)
            .collect(),
        high: i % 5 == 1,
        vip: i % 9 < 2,
        resolved: i % 10 == 4,
    }
}

async fn create_seeded(app: &TestApp, acme: &TestCompany, i: usize) -> Seeded {
    let mut s = seeded(i);
    let mut fields = serde_json::Map::new();
    if let Some(plan) = s.plan {
        fields.insert("plan".into(), json!(plan));
    }
    if let Some(total) = s.order_total {
        fields.insert("order_total".into(), json!(total));
    }
    if let Some(renewal) = &s.renewal {
        fields.insert("renewal".into(), json!(renewal));
    }
    if let Some(churned) = s.churned {
        fields.insert("churned".into(), json!(churned));
    }
    if !s.features.is_empty() {
        fields.insert("features".into(), json!(s.features));
    }
    let body = json!({
        "customFields": fields,
        "priority": if s.high { "HIGH" } else { "LOW" },
        "tags": if s.vip { vec!["vip"] } else { Vec::new() },
    });
    let r = create_ticket(app, acme, body).await;
    s.id = id_of(r.assert_status(201));
    if s.resolved {
        app.patch(
            &format!("/tickets/{}", s.id),
            &acme.key,
            json!({"status": "RESOLVED"}),
        )
        .await
        .assert_status(200);
    }
    s
}

/// Every id a filtered list answers (pages of 100) and the `total` of its
/// first page.
async fn listed(app: &TestApp, key: &str, query: &str) -> (Vec<String>, i64) {
    let (mut ids, mut total) = (Vec::new(), -1);
    for offset in (0..).step_by(100) {
        let r = app
            .get(&format!("/tickets?{query}&limit=100&offset={offset}"), key)
            .await;
        let body = r.assert_status(200);
        if offset == 0 {
            total = body["total"].as_i64().expect("total");
        }
        let data = body["data"].as_array().expect("data");
        if data.is_empty() {
            break;
        }
        ids.extend(data.iter().map(id_of));
    }
    (ids, total)
}

async fn field_filters_give_exactly_the_matching_tickets(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let mut acme = app.company().await;
    // Thousands of requests in a few seconds: above the usual key's limit.
    let (company, scopes) = (acme.company.id, ScopeSet::all());
    acme.key = app.key_with(company, Mode::Test, scopes, 1_000_000).await;
    let other = app.company().await;
    define_ticket_fields(&app, &acme).await;
    define_ticket_fields(&app, &other).await;
    let app_ref = &app;
    let acme_ref = &acme;
    let tickets: Vec<Seeded> = futures::stream::iter(0..TICKETS)
        .map(|i| create_seeded(app_ref, acme_ref, i))
        .buffer_unordered(AT_ONCE)
        .collect()
        .await;
    // Another company's matching ticket stays out of every answer.
    create_seeded(&app, &other, 1).await;

    type Want = fn(&Seeded) -> bool;
    let cases: [(&str, Want); 10] = [
        ("cf.plan=pro", |s| s.plan == Some("pro")),
        ("cf.order_total[gte]=100&cf.order_total[lt]=500", |s| {
            s.order_total.is_some_and(|t| (100.0..500.0).contains(&t))
        }),
        ("cf.order_total[gt]=990.5", |s| {
            s.order_total.is_some_and(|t| t > 990.5)
        }),
        ("cf.renewal[lte]=2026-03-15", |s| {
            s.renewal.as_deref().is_some_and(|r| r <= "2026-03-15")
        }),
        ("cf.churned=false", |s| s.churned == Some(false)),
        ("cf.features=sso", |s| s.features.contains(&"sso")),
        ("cf.features=sso&cf.features=audit", |s| {
            s.features.contains(&"sso") && s.features.contains(&"audit")
        }),
        ("cf.plan=basic&status=RESOLVED", |s| {
            s.plan == Some("basic") && s.resolved
        }),
        ("cf.plan=enterprise&tag=vip&priority=HIGH", |s| {
            s.plan == Some("enterprise") && s.vip && s.high
        }),
        (
            "cf.order_total[lte]=300&cf.churned=true&tag=vip&status=OPEN",
            |s| {
                s.order_total.is_some_and(|t| t <= 300.0)
                    && s.churned == Some(true)
                    && s.vip
                    && !s.resolved
            },
        ),
    ];
    for (query, want) in cases {
        let expected: BTreeSet<String> = tickets
            .iter()
            .filter(|s| want(s))
            .map(|s| s.id.clone())
            .collect();
        assert!(!expected.is_empty(), "{query} selects something");
        let (ids, total) = listed(&app, &acme.key, query).await;
        assert_eq!(ids.len(), expected.len(), "{query}: no repeats or gaps");
        let got: BTreeSet<String> = ids.into_iter().collect();
        assert_eq!(got, expected, "{query}");
        assert_eq!(total, expected.len() as i64, "{query}: total");
    }
}

async fn bad_field_filters_are_400(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    define_ticket_fields(&app, &acme).await;
    for (query, field) in [
        ("cf.nope=1", "cf.nope"),
        ("cf.plan=gold", "cf.plan"),
        ("cf.plan[gte]=pro", "cf.plan"),
        ("cf.order_total=lots", "cf.order_total"),
        ("cf.order_total[near]=5", "cf.order_total"),
        ("cf.renewal[lt]=soon", "cf.renewal"),
        ("cf.churned=maybe", "cf.churned"),
    ] {
        let r = app.get(&format!("/tickets?{query}"), &acme.key).await;
        assert_invalid(&r, &[field]);
    }
}
