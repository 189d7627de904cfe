//! The audit retention: a company setting (`auditRetentionDays`, none by
//! default), and the retention pass that drops the start of each chain
//! past it while what remains still verifies.

use chrono::Duration;
use serde_json::json;
use supportdesk::audit::verify::Verdict;

use super::{entries_of, seal, verdict};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany, assert_invalid, retention_pass};

backend_tests!(
    the_audit_retention_is_a_company_setting,
    an_audit_retention_out_of_range_is_refused,
    the_retention_pass_drops_entries_past_the_retention_and_the_rest_verifies,
    without_a_retention_the_pass_keeps_every_entry,
);

/// A custom role (one entry) named `name`.
async fn change(app: &TestApp, acme: &TestCompany, name: &str) {
    app.post(
        "/roles",
        &acme.key,
        json!({"name": name, "scopes": ["tickets:read"]}),
    )
    .await
    .assert_status(201);
}

async fn the_audit_retention_is_a_company_setting(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;

    let set = app
        .patch("/settings", &acme.key, json!({"auditRetentionDays": 30}))
        .await;

    assert_eq!(set.assert_status(200)["auditRetentionDays"], 30);
    let read = app.get("/settings", &acme.key).await;
    assert_eq!(read.assert_status(200)["auditRetentionDays"], 30);
}

async fn an_audit_retention_out_of_range_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;

    let r = app
        .patch("/settings", &acme.key, json!({"auditRetentionDays": 0}))
        .await;

    assert_invalid(&r, &["auditRetentionDays"]);
}

async fn the_retention_pass_drops_entries_past_the_retention_and_the_rest_verifies(
    backend: Backend,
) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    change(&app, &acme, "Old").await;
    seal(&app, acme.company.id).await;
    app.state.clock.advance(Duration::days(40));
    app.patch("/settings", &acme.key, json!({"auditRetentionDays": 30}))
        .await
        .assert_status(200);
    change(&app, &acme, "New").await;
    seal(&app, acme.company.id).await;

    retention_pass(&app).await;

    assert_eq!(entries_of(&app, &acme, "role.created").await.len(), 1);
    assert!(
        matches!(
            verdict(&app, acme.company.id).await,
            Verdict::Whole { from, .. } if from > 1
        ),
        "the chain verifies from its new start"
    );
}

async fn without_a_retention_the_pass_keeps_every_entry(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    change(&app, &acme, "Old").await;
    seal(&app, acme.company.id).await;
    app.state.clock.advance(Duration::days(4000));

    retention_pass(&app).await;

    assert_eq!(entries_of(&app, &acme, "role.created").await.len(), 1);
}
