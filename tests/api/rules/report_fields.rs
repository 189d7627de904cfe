//! `GET /reports/tickets?cf.<key>=…`: the report covers only the tickets
//! the custom field filters select, as `GET /tickets` filters them.

use serde_json::{Value, json};
use supportdesk::auth::{Mode, Tenant};
use uuid::Uuid;

use super::reports::{ESCALATIONS, TICKETS, expected_where, insert_escalation, insert_ticket};
use super::{assert_invalid, tenant};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    a_report_filtered_by_a_custom_field_counts_only_the_matching_tickets,
    a_report_filtered_by_a_custom_field_range_counts_only_the_tickets_in_it,
    a_report_with_a_bad_custom_field_filter_is_refused,
);

const PERIOD: &str = "/reports/tickets?from=2026-03-02&to=2026-03-08";

/// The `plan` of the data set's ticket number `n`.
fn plan_of(n: usize) -> Option<&'static str> {
    match n % 3 {
        0 => Some("pro"),
        1 => Some("basic"),
        _ => None,
    }
}

/// The `order_total` of ticket number `n`.
fn total_of(n: usize) -> Option<f64> {
    n.is_multiple_of(2).then_some(n as f64 * 25.0)
}

/// One value row, as the ticket API writes it for a filter to probe.
async fn value(app: &TestApp, tenant: &Tenant, ticket: Uuid, key: &str, v: Value) {
    let (text, number) = match &v {
        Value::Number(n) => (None, n.as_f64()),
        other => (other.as_str().map(str::to_string), None),
    };
    supportdesk::on_db!(&app.state.db, c => sqlx::query(
        "INSERT INTO ticket_field_values (ticket_id, company_id, mode, key, text_value, \
         number_value) VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(ticket)
        .bind(tenant.company_id)
        .bind(tenant.mode.as_str())
        .bind(key)
        .bind(text.clone())
        .bind(number)
        .execute(c)
        .await
        .expect("value inserted")
        .rows_affected());
}

async fn define(app: &TestApp, key: &str, body: Value) {
    app.post("/settings/custom-fields", key, body)
        .await
        .assert_status(201);
}

/// The report data set in acme's TEST mode with `plan_of` and `total_of`,
/// and "pro" tickets in its LIVE mode and in another company, which
/// acme's TEST report never counts.
async fn data_set(app: &TestApp) -> TestCompany {
    let acme = app.company().await;
    let other = app.company().await;
    define(
        app,
        &acme.key,
        json!({"key": "plan", "label": "Plan", "type": "select", "appliesTo": ["ticket"],
               "options": ["basic", "pro"]}),
    )
    .await;
    define(
        app,
        &acme.key,
        json!({"key": "order_total", "label": "Total", "type": "number",
               "appliesTo": ["ticket"]}),
    )
    .await;
    let test = tenant(acme.company.id, Mode::Test);
    let mut ids = Vec::new();
    for (n, spec) in TICKETS.iter().enumerate() {
        let id = insert_ticket(app, &test, acme.entity.id, n, spec).await;
        if let Some(plan) = plan_of(n) {
            value(app, &test, id, "plan", json!(plan)).await;
        }
        if let Some(total) = total_of(n) {
            value(app, &test, id, "order_total", json!(total)).await;
        }
        ids.push(id);
    }
    for (i, when, automatic) in ESCALATIONS {
        insert_escalation(app, &test, ids[*i], when, *automatic).await;
    }
    let live = tenant(acme.company.id, Mode::Live);
    let elsewhere = tenant(other.company.id, Mode::Test);
    for (n, spec) in TICKETS.iter().enumerate().take(6) {
        for (tenant, entity) in [(&live, acme.entity.id), (&elsewhere, other.entity.id)] {
            let id = insert_ticket(app, tenant, entity, n, spec).await;
            value(app, tenant, id, "plan", json!("pro")).await;
            value(app, tenant, id, "order_total", json!(150.0)).await;
            insert_escalation(app, tenant, id, "2026-03-04T00:00:00Z", true).await;
        }
    }
    acme
}

async fn a_report_filtered_by_a_custom_field_counts_only_the_matching_tickets(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = data_set(&app).await;
    let r = app.get(&format!("{PERIOD}&cf.plan=pro"), &acme.key).await;
    let expected = expected_where(Value::Null, &|n, _| plan_of(n) == Some("pro"));
    assert_eq!(*r.assert_status(200), expected);
}

async fn a_report_filtered_by_a_custom_field_range_counts_only_the_tickets_in_it(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = data_set(&app).await;
    let r = app
        .get(
            &format!("{PERIOD}&cf.order_total[gte]=100&cf.order_total%5Blt%5D=300"),
            &acme.key,
        )
        .await;
    let expected = expected_where(Value::Null, &|n, _| {
        total_of(n).is_some_and(|t| (100.0..300.0).contains(&t))
    });
    assert_eq!(*r.assert_status(200), expected);
}

async fn a_report_with_a_bad_custom_field_filter_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = data_set(&app).await;
    let r = app.get(&format!("{PERIOD}&cf.nope=1"), &acme.key).await;
    assert_invalid(&r, &["cf.nope"]);
    let r = app
        .get(&format!("{PERIOD}&cf.order_total[gte]=ten"), &acme.key)
        .await;
    assert_invalid(&r, &["cf.order_total"]);
}
