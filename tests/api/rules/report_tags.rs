//! `GET /reports/tickets?tag=…&anyTag=…`: the report covers only the
//! tickets the tag filters select, as `GET /tickets` filters them.

use serde_json::Value;
use supportdesk::auth::{Mode, Tenant};
use uuid::Uuid;

use super::reports::{ESCALATIONS, TICKETS, expected_where, insert_escalation, insert_ticket};
use super::{assert_invalid, tenant};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    a_report_filtered_by_a_tag_counts_only_the_tagged_tickets,
    a_report_filtered_by_any_tag_counts_tickets_carrying_one_of_them,
    a_report_with_a_bad_tag_filter_is_refused,
);

const PERIOD: &str = "/reports/tickets?from=2026-03-02&to=2026-03-08";

/// The tags of the data set's ticket number `n`.
fn tags_of(n: usize) -> &'static [&'static str] {
    match n % 4 {
        0 => &["vip"],
        1 => &["billing", "vip"],
        2 => &["eu"],
        _ => &[],
    }
}

async fn tag(app: &TestApp, tenant: &Tenant, ticket: Uuid, tag: &str) {
    supportdesk::on_db!(&app.state.db, c => sqlx::query(
        "INSERT INTO ticket_tags (ticket_id, company_id, mode, tag) VALUES ($1, $2, $3, $4)")
        .bind(ticket)
        .bind(tenant.company_id)
        .bind(tenant.mode.as_str())
        .bind(tag)
        .execute(c)
        .await
        .expect("tag inserted")
        .rows_affected());
}

/// The report data set in acme's TEST mode, tagged by `tags_of`, and
/// "vip" tickets in its LIVE mode and in another company, which acme's
/// TEST report never counts.
async fn tagged_data_set(app: &TestApp) -> TestCompany {
    let acme = app.company().await;
    let other = app.company().await;
    let test = tenant(acme.company.id, Mode::Test);
    let mut ids = Vec::new();
    for (n, spec) in TICKETS.iter().enumerate() {
        let id = insert_ticket(app, &test, acme.entity.id, n, spec).await;
        for t in tags_of(n) {
            tag(app, &test, id, t).await;
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
            tag(app, tenant, id, "vip").await;
            insert_escalation(app, tenant, id, "2026-03-04T00:00:00Z", true).await;
        }
    }
    acme
}

async fn a_report_filtered_by_a_tag_counts_only_the_tagged_tickets(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = tagged_data_set(&app).await;
    let r = app.get(&format!("{PERIOD}&tag=VIP"), &acme.key).await;
    let expected = expected_where(Value::Null, &|n, _| tags_of(n).contains(&"vip"));
    assert_eq!(*r.assert_status(200), expected);
}

async fn a_report_filtered_by_any_tag_counts_tickets_carrying_one_of_them(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = tagged_data_set(&app).await;
    let r = app
        .get(&format!("{PERIOD}&anyTag=billing,eu"), &acme.key)
        .await;
    let expected = expected_where(Value::Null, &|n, _| {
        tags_of(n).iter().any(|t| ["billing", "eu"].contains(t))
    });
    assert_eq!(*r.assert_status(200), expected);
}

async fn a_report_with_a_bad_tag_filter_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = app.get(&format!("{PERIOD}&tag=a%20b"), &acme.key).await;
    assert_invalid(&r, &["tag"]);
    let r = app.get(&format!("{PERIOD}&anyTag=x!"), &acme.key).await;
    assert_invalid(&r, &["anyTag"]);
}
