//! `supportdesk audit prune`: it drops only what the company's retention
//! lets go, and records the cut (`audit.pruned`) in the chain that still
//! verifies.

use chrono::Duration;
use serde_json::json;
use supportdesk::audit::verify::Verdict;

use super::{entries_of, only_entry, seal, verdict};
use crate::backend_tests;
use crate::platform::cli;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    the_prune_command_refuses_a_company_that_keeps_every_entry,
    the_prune_command_refuses_a_cut_inside_the_retention,
    the_prune_command_records_the_cut_and_the_chain_verifies,
);

/// A company created 40 days ago (by the app's clock, set back and
/// forward again: its entity and key, entries 1 and 2) with two roles
/// written then and one now, all sealed; its retention is `days`, if any.
async fn old_and_new(app: &TestApp, days: Option<u32>) -> TestCompany {
    app.state.clock.advance(Duration::days(-40));
    let acme = app.company().await;
    for name in ["Old 1", "Old 2"] {
        role(app, &acme, name).await;
    }
    app.state.clock.advance(Duration::days(40));
    role(app, &acme, "New").await;
    if let Some(days) = days {
        app.patch("/settings", &acme.key, json!({"auditRetentionDays": days}))
            .await
            .assert_status(200);
    }
    seal(app, acme.company.id).await;
    acme
}

async fn role(app: &TestApp, acme: &TestCompany, name: &str) {
    app.post(
        "/roles",
        &acme.key,
        json!({"name": name, "scopes": ["tickets:read"]}),
    )
    .await
    .assert_status(201);
}

/// `audit prune` of the company, cutting `ago` back from now.
fn prune(app: &TestApp, acme: &TestCompany, ago: Duration) -> (bool, String, String) {
    let before = (chrono::Utc::now() - ago).to_rfc3339();
    let company = acme.company.id.to_string();
    cli(
        app,
        &["audit", "prune", "--company", &company, "--before", &before],
    )
}

async fn the_prune_command_refuses_a_company_that_keeps_every_entry(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = old_and_new(&app, None).await;

    let (ok, _, stderr) = prune(&app, &acme, Duration::days(35));

    assert!(
        !ok && stderr.contains("keeps every audit entry"),
        "{stderr}"
    );
    assert_eq!(entries_of(&app, &acme, "role.created").await.len(), 3);
}

async fn the_prune_command_refuses_a_cut_inside_the_retention(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = old_and_new(&app, Some(30)).await;

    let (ok, _, stderr) = prune(&app, &acme, Duration::days(1));

    assert!(
        !ok && stderr.contains("inside company") && stderr.contains("retention of 30 days"),
        "{stderr}"
    );
    assert_eq!(entries_of(&app, &acme, "role.created").await.len(), 3);
}

async fn the_prune_command_records_the_cut_and_the_chain_verifies(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = old_and_new(&app, Some(30)).await;

    let (ok, stdout, stderr) = prune(&app, &acme, Duration::days(35));

    assert!(ok, "{stderr}");
    // The company's entity and key, and the two old roles.
    assert!(stdout.contains("dropped 4 audit entries"), "{stdout}");
    let cut = only_entry(&app, &acme, "audit.pruned").await;
    assert_eq!(
        (
            &cut["actor"]["type"],
            &cut["target"]["type"],
            &cut["target"]["id"]
        ),
        (&json!("system"), &json!("company"), &json!(acme.company.id))
    );
    assert_eq!(
        (&cut["changes"]["dropped"], &cut["changes"]["firstKept"]),
        (&json!(4), &json!(5))
    );
    assert!(cut["seq"].is_i64(), "sealed: {cut}");
    assert!(
        matches!(verdict(&app, acme.company.id).await, Verdict::Whole { from: 5, up_to } if up_to == cut["seq"]),
        "the chain verifies from the cut through the cut's entry"
    );
}
