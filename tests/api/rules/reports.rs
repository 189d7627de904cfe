//! `GET /reports/tickets`: figures for a fixed data set (inserted with
//! fixed timestamps) equal the ones computed here by hand, on both
//! backends; parameters are validated.

use chrono::{DateTime, NaiveDate, Utc};
use serde_json::{Value, json};
use supportdesk::auth::{Mode, Tenant};
use supportdesk::time::Timestamp;
use uuid::Uuid;

use super::{assert_invalid, tenant};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    report_figures_match_a_fixed_data_set,
    report_parameters_are_validated,
    report_dates_at_the_ends_of_the_calendar_are_refused,
    report_dates_outside_1970_to_9999_are_refused,
    report_from_after_to_is_refused,
    report_periods_at_the_edges_of_the_range_are_served,
);

/// One ticket of the data set.
pub(super) struct Spec {
    created: &'static str,
    resolved: Option<&'static str>,
    status: &'static str,
    priority: &'static str,
    /// Of the second entity (else the main one).
    second: bool,
}

const fn spec(
    created: &'static str,
    resolved: Option<&'static str>,
    status: &'static str,
    priority: &'static str,
    second: bool,
) -> Spec {
    Spec {
        created,
        resolved,
        status,
        priority,
        second,
    }
}

/// The period asked for: `from=2026-03-02&to=2026-03-08`, i.e.
/// [2026-03-02T00:00Z, 2026-03-09T00:00Z).
const FROM: &str = "2026-03-02T00:00:00Z";
const TO: &str = "2026-03-09T00:00:00Z";

pub(super) const TICKETS: &[Spec] = &[
    // Created the millisecond before the period, resolved in it (2 h).
    spec(
        "2026-03-01T23:59:59.999Z",
        Some("2026-03-02T01:59:59.999Z"),
        "RESOLVED",
        "LOW",
        false,
    ),
    spec(
        "2026-03-02T00:00:00Z",
        Some("2026-03-02T00:10:00Z"),
        "CLOSED",
        "MEDIUM",
        false,
    ),
    spec(
        "2026-03-02T08:00:00Z",
        Some("2026-03-02T08:20:00.250Z"),
        "RESOLVED",
        "HIGH",
        true,
    ),
    spec(
        "2026-03-03T09:00:00Z",
        Some("2026-03-03T09:30:00Z"),
        "RESOLVED",
        "MEDIUM",
        false,
    ),
    spec("2026-03-03T10:00:00Z", None, "OPEN", "URGENT", false),
    spec(
        "2026-03-04T12:00:00Z",
        Some("2026-03-04T13:00:00Z"),
        "RESOLVED",
        "HIGH",
        false,
    ),
    spec(
        "2026-03-04T12:30:00Z",
        Some("2026-03-04T13:30:00Z"),
        "CLOSED",
        "LOW",
        true,
    ),
    spec(
        "2026-03-05T00:00:00Z",
        Some("2026-03-05T02:00:00Z"),
        "RESOLVED",
        "MEDIUM",
        false,
    ),
    spec("2026-03-05T06:00:00Z", None, "IN_PROGRESS", "HIGH", false),
    spec(
        "2026-03-06T00:00:00Z",
        Some("2026-03-06T03:00:00Z"),
        "RESOLVED",
        "URGENT",
        false,
    ),
    spec(
        "2026-03-06T05:00:00Z",
        Some("2026-03-06T15:00:00Z"),
        "RESOLVED",
        "MEDIUM",
        true,
    ),
    spec(
        "2026-03-07T00:00:00Z",
        Some("2026-03-08T00:00:00Z"),
        "CLOSED",
        "MEDIUM",
        false,
    ),
    // The last millisecond of the period.
    spec("2026-03-08T23:59:59.999Z", None, "OPEN", "LOW", false),
    // Resolved exactly at the end of the period: not in it.
    spec(
        "2026-03-08T20:00:00Z",
        Some("2026-03-09T00:00:00Z"),
        "RESOLVED",
        "HIGH",
        false,
    ),
    // Created exactly at the end, and before the start (closed unresolved).
    spec("2026-03-09T00:00:00Z", None, "OPEN", "MEDIUM", false),
    spec("2026-03-01T00:00:00Z", None, "CLOSED", "MEDIUM", false),
];

/// Escalations: (index into TICKETS, at, automatic).
pub(super) const ESCALATIONS: &[(usize, &str, bool)] = &[
    (4, "2026-03-03T11:00:00Z", false),
    (8, "2026-03-05T07:00:00Z", true),
    (8, "2026-03-05T08:00:00Z", false),
    (2, "2026-03-02T09:00:00Z", true),
    (4, "2026-03-09T00:00:00Z", true),
    (15, "2026-03-01T12:00:00Z", false),
];

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .expect("timestamp")
        .with_timezone(&Utc)
}

fn in_period(text: &str) -> bool {
    (at(FROM)..at(TO)).contains(&at(text))
}

pub(super) async fn insert_ticket(
    app: &TestApp,
    tenant: &Tenant,
    entity: Uuid,
    number: usize,
    spec: &Spec,
) -> Uuid {
    let id = Uuid::now_v7();
    let created = Timestamp::from_datetime(at(spec.created));
    let resolved = spec.resolved.map(|r| Timestamp::from_datetime(at(r)));
    supportdesk::on_db!(&app.state.db, c => sqlx::query(
        "INSERT INTO tickets (id, company_id, mode, entity_id, ticket_number, subject, status, \
         priority, resolved_at, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)")
        .bind(id)
        .bind(tenant.company_id)
        .bind(tenant.mode.as_str())
        .bind(entity)
        .bind(format!("TKT-9{number:05}"))
        .bind(format!("Report {number}"))
        .bind(spec.status)
        .bind(spec.priority)
        .bind(resolved)
        .bind(created)
        .execute(c)
        .await
        .expect("ticket inserted")
        .rows_affected());
    id
}

pub(super) async fn insert_escalation(
    app: &TestApp,
    tenant: &Tenant,
    ticket: Uuid,
    when: &str,
    automatic: bool,
) {
    let details = sqlx::types::Json(json!({"reason": null, "automatic": automatic}));
    supportdesk::on_db!(&app.state.db, c => sqlx::query(
        "INSERT INTO ticket_activities (id, company_id, mode, ticket_id, kind, details, created_at) \
         VALUES ($1, $2, $3, $4, 'escalated', $5, $6)")
        .bind(Uuid::now_v7())
        .bind(tenant.company_id)
        .bind(tenant.mode.as_str())
        .bind(ticket)
        .bind(details)
        .bind(Timestamp::from_datetime(at(when)))
        .execute(c)
        .await
        .expect("activity inserted")
        .rows_affected());
}

/// Interpolated percentile of sorted millisecond durations (the definition
/// in docs/api.md), in seconds rounded to the millisecond.
fn percentile(sorted: &[f64], p: f64) -> Value {
    if sorted.is_empty() {
        return Value::Null;
    }
    let pos = p * (sorted.len() - 1) as f64;
    let k = pos.floor() as usize;
    let lo = sorted[k];
    let hi = sorted[(k + 1).min(sorted.len() - 1)];
    json!((lo + (hi - lo) * (pos - k as f64)).round() / 1000.0)
}

/// The report computed by hand from TICKETS and ESCALATIONS; `second`
/// selects the second entity's tickets only.
fn expected(second: Uuid, only_second: bool) -> Value {
    let entity_id = if only_second {
        json!(second)
    } else {
        Value::Null
    };
    expected_where(entity_id, &|_, t| !only_second || t.second)
}

/// The report over the tickets of TICKETS (by index) that `keep` selects,
/// with `entityId` as given.
pub(super) fn expected_where(entity_id: Value, keep: &dyn Fn(usize, &Spec) -> bool) -> Value {
    let tickets: Vec<&Spec> = TICKETS
        .iter()
        .enumerate()
        .filter(|(i, t)| keep(*i, t))
        .map(|(_, t)| t)
        .collect();
    let created: Vec<&&Spec> = tickets.iter().filter(|t| in_period(t.created)).collect();
    let resolved: Vec<&&Spec> = tickets
        .iter()
        .filter(|t| t.resolved.is_some_and(in_period))
        .collect();
    let count = |values: &[&str], pick: &dyn Fn(&Spec) -> &str| {
        let mut map = serde_json::Map::new();
        for v in values {
            let n = created.iter().filter(|t| pick(t) == *v).count();
            map.insert(v.to_string(), json!(n));
        }
        Value::Object(map)
    };
    let day_of = |text: &str| at(text).date_naive();
    let daily: Vec<Value> = NaiveDate::from_ymd_opt(2026, 3, 2)
        .expect("date")
        .iter_days()
        .take(7)
        .map(|day| {
            json!({
                "date": day.to_string(),
                "created": created.iter().filter(|t| day_of(t.created) == day).count(),
                "resolved": resolved.iter()
                    .filter(|t| t.resolved.is_some_and(|r| day_of(r) == day)).count(),
            })
        })
        .collect();
    let mut ms: Vec<f64> = resolved
        .iter()
        .map(|t| {
            let resolved = at(t.resolved.expect("resolved"));
            (resolved - at(t.created)).num_milliseconds() as f64
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    let escalations: Vec<bool> = ESCALATIONS
        .iter()
        .filter(|(i, when, _)| in_period(when) && keep(*i, &TICKETS[*i]))
        .map(|(_, _, automatic)| *automatic)
        .collect();
    let automatic = escalations.iter().filter(|a| **a).count();
    json!({
        "from": "2026-03-02T00:00:00.000Z",
        "to": "2026-03-09T00:00:00.000Z",
        "entityId": entity_id,
        "tickets": {
            "created": created.len(),
            "resolved": resolved.len(),
            "byStatus": count(&["OPEN", "IN_PROGRESS", "PENDING", "RESOLVED", "CLOSED"], &|t| t.status),
            "byPriority": count(&["LOW", "MEDIUM", "HIGH", "URGENT"], &|t| t.priority),
        },
        "daily": daily,
        "resolutionTime": {
            "count": resolved.len(),
            "medianSeconds": percentile(&ms, 0.5),
            "p90Seconds": percentile(&ms, 0.9),
        },
        "escalations": {
            "total": escalations.len(),
            "manual": escalations.len() - automatic,
            "automatic": automatic,
        },
        // No SLA policy in this data set.
        "sla": {
            "achievement": [],
            "firstResponse": {"count": 0, "medianBusinessMinutes": null, "p90BusinessMinutes": null},
        },
        // No ratings in this data set (the csat tests cover those figures).
        "csat": {"count": 0, "average": null,
                 "distribution": {"1": 0, "2": 0, "3": 0, "4": 0, "5": 0}},
    })
}

async fn report_figures_match_a_fixed_data_set(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let other = app.company().await;
    let main = acme.entity.id;
    let second = supportdesk::entities::store::create(
        &app.state.db,
        acme.company.id,
        "Second",
        None,
        app.state.clock.now(),
    )
    .await
    .expect("entity")
    .id;
    let test = tenant(acme.company.id, Mode::Test);
    let mut ids = Vec::new();
    for (n, spec) in TICKETS.iter().enumerate() {
        let entity = if spec.second { second } else { main };
        ids.push(insert_ticket(&app, &test, entity, n, spec).await);
    }
    for (i, when, automatic) in ESCALATIONS {
        insert_escalation(&app, &test, ids[*i], when, *automatic).await;
    }
    // The same tickets in acme's LIVE mode and in another company: never
    // counted in acme's TEST report.
    let live = tenant(acme.company.id, Mode::Live);
    let elsewhere = tenant(other.company.id, Mode::Test);
    for (n, spec) in TICKETS.iter().enumerate().take(6) {
        let id = insert_ticket(&app, &live, main, n, spec).await;
        insert_escalation(&app, &live, id, "2026-03-04T00:00:00Z", true).await;
        let id = insert_ticket(&app, &elsewhere, other.entity.id, n, spec).await;
        insert_escalation(&app, &elsewhere, id, "2026-03-04T00:00:00Z", false).await;
    }

    let path = "/reports/tickets?from=2026-03-02&to=2026-03-08";
    let report = app.get(path, &acme.key).await.assert_status(200).clone();
    assert_eq!(report, expected(second, false));
    // The figures, spelt out once.
    assert_eq!(report["tickets"]["created"], 13);
    assert_eq!(report["tickets"]["resolved"], 10);
    assert_eq!(
        report["tickets"]["byStatus"],
        json!({"OPEN": 2, "IN_PROGRESS": 1, "PENDING": 0, "RESOLVED": 7, "CLOSED": 3})
    );
    assert_eq!(
        report["resolutionTime"],
        json!({"count": 10, "medianSeconds": 5400.0, "p90Seconds": 41040.0})
    );
    assert_eq!(
        report["escalations"],
        json!({"total": 4, "manual": 2, "automatic": 2})
    );
    assert_eq!(
        report["daily"][0],
        json!({"date": "2026-03-02", "created": 2, "resolved": 3})
    );

    // Timestamps give the same period as the dates.
    let r = app
        .get(
            "/reports/tickets?from=2026-03-02T00:00:00Z&to=2026-03-09T01:00:00%2B01:00",
            &acme.key,
        )
        .await;
    assert_eq!(*r.assert_status(200), report);

    let path = format!("/reports/tickets?from=2026-03-02&to=2026-03-08&entityId={second}");
    let report = app.get(&path, &acme.key).await.assert_status(200).clone();
    assert_eq!(report, expected(second, true));
    assert_eq!(
        report["resolutionTime"],
        json!({"count": 3, "medianSeconds": 3600.0, "p90Seconds": 29520.0})
    );
    assert_eq!(
        report["escalations"],
        json!({"total": 1, "manual": 0, "automatic": 1})
    );

    // Another company's entity simply has nothing of acme's.
    let path = format!(
        "/reports/tickets?from=2026-03-02&to=2026-03-08&entityId={}",
        other.entity.id
    );
    let r = app.get(&path, &acme.key).await;
    let empty = r.assert_status(200);
    assert_eq!(empty["tickets"]["created"], 0);
    assert_eq!(
        empty["resolutionTime"],
        json!({"count": 0, "medianSeconds": null, "p90Seconds": null})
    );
}

async fn report_parameters_are_validated(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();

    // Default: the last 30 days, every day listed, nothing in them.
    let r = app.get("/reports/tickets", key).await;
    let report = r.assert_status(200);
    let (from, to) = (
        at(report["from"].as_str().expect("from")),
        at(report["to"].as_str().expect("to")),
    );
    assert_eq!((to - from).num_days(), 30);
    // Every calendar day the period touches: 31, or 30 when `to` falls
    // exactly on midnight (its day then holds no instant of the period).
    let last_day = (to - chrono::TimeDelta::milliseconds(1)).date_naive();
    let touched = (last_day - from.date_naive()).num_days() + 1;
    let days = report["daily"].as_array().expect("daily").len();
    assert_eq!(days as i64, touched, "{days} days from {from} to {to}");
    assert_eq!(report["tickets"]["created"], 0);
    assert_eq!(report["entityId"], Value::Null);

    let cases: Vec<(&str, &[&str])> = vec![
        ("from=yesterday", &["from"]),
        ("to=2026-02-30", &["to"]),
        ("from=2026-03-02&to=2026-03-01", &["from"]),
        (
            "from=2026-03-02T10:00:00Z&to=2026-03-02T10:00:00Z",
            &["from"],
        ),
        ("from=2024-01-01&to=2025-12-31", &["from"]),
        ("entityId=nope&from=x", &["entityId", "from"]),
    ];
    for (query, fields) in cases {
        let r = app.get(&format!("/reports/tickets?{query}"), key).await;
        assert_invalid(&r, fields);
    }
    // A single day, and a year, are fine.
    for query in [
        "from=2026-03-02&to=2026-03-02",
        "from=2025-01-01&to=2025-12-31",
    ] {
        let r = app.get(&format!("/reports/tickets?{query}"), key).await;
        r.assert_status(200);
    }
}

/// Asks for the report with each query and expects a 400 naming `field`.
async fn assert_refused(app: &TestApp, key: &str, queries: &[&str], field: &str) {
    for query in queries {
        let r = app.get(&format!("/reports/tickets?{query}"), key).await;
        assert_invalid(&r, &[field]);
    }
}

async fn report_dates_at_the_ends_of_the_calendar_are_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    assert_refused(
        &app,
        &acme.key,
        &["to=-262143-01-01", "to=%2B262142-12-31"],
        "to",
    )
    .await;
    assert_refused(
        &app,
        &acme.key,
        &["from=+262142-12-31", "from=-262143-01-01&to=2026-03-01"],
        "from",
    )
    .await;
}

async fn report_dates_outside_1970_to_9999_are_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    assert_refused(
        &app,
        key,
        &[
            "from=1969-12-31&to=1970-01-05",
            "from=1970-01-01T00:00:00%2B01:00&to=1970-01-05",
            "from=10000-01-01",
        ],
        "from",
    )
    .await;
    assert_refused(
        &app,
        key,
        &[
            "to=1969-12-31",
            "from=9999-12-01&to=10000-01-01",
            "from=9999-12-01&to=9999-12-31T23:00:00-05:00",
        ],
        "to",
    )
    .await;
    let r = app.get("/reports/tickets?from=1969-12-31", key).await;
    assert_eq!(
        r.body["details"][0]["message"], "must be between 1970-01-01 and 9999-12-31",
        "{}",
        r.text
    );
}

async fn report_from_after_to_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    assert_refused(
        &app,
        &acme.key,
        &[
            "from=9999-12-31&to=1970-01-01",
            "from=2026-03-09&to=2026-03-01",
            "to=1970-01-01T00:00:00Z",
        ],
        "from",
    )
    .await;
}

async fn report_periods_at_the_edges_of_the_range_are_served(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let cases = [
        (
            "from=1970-01-01&to=1970-01-31",
            "1970-01-01T00:00:00.000Z",
            "1970-02-01T00:00:00.000Z",
        ),
        // `from` defaults to 30 days before `to`, but not before 1970.
        (
            "to=1970-01-01",
            "1970-01-01T00:00:00.000Z",
            "1970-01-02T00:00:00.000Z",
        ),
        // The end of the last day is its last millisecond.
        (
            "from=9999-12-31&to=9999-12-31",
            "9999-12-31T00:00:00.000Z",
            "9999-12-31T23:59:59.999Z",
        ),
    ];
    for (query, from, to) in cases {
        let r = app.get(&format!("/reports/tickets?{query}"), key).await;
        let report = r.assert_status(200);
        assert_eq!(
            (report["from"].as_str(), report["to"].as_str()),
            (Some(from), Some(to)),
            "{query}"
        );
    }
}
