//! The chain: the sealer numbers and hashes the committed entries; `audit
//! verify` passes on it, and names the first entry changed, removed or
//! reordered directly in the database; retention drops the start and what
//! remains still verifies.

use chrono::Duration;
use serde_json::json;
use supportdesk::audit::verify::{Problem, Verdict};
use supportdesk::db::Query;
use uuid::Uuid;

use super::{seal, verdict};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany, eventually};

backend_tests!(
    a_sealed_chain_verifies_whole,
    entries_sealed_later_continue_the_chain,
    a_changed_entry_is_named,
    a_removed_entry_is_named,
    a_removed_last_entry_is_named,
    swapped_entries_are_named,
    the_verify_command_names_the_entry,
    retention_keeps_the_rest_verifiable,
    an_entry_is_unsealed_until_the_sealer_runs,
    a_committed_entry_wakes_the_sealer,
);

/// Creates `count` custom roles (one entry each) through the API.
async fn changes(app: &TestApp, acme: &TestCompany, first: usize, count: usize) {
    for n in first..first + count {
        app.post(
            "/roles",
            &acme.key,
            json!({"name": format!("Role {n}"), "scopes": ["tickets:read"]}),
        )
        .await
        .assert_status(201);
    }
}

/// The company's sealed entries as (seq, id), in chain order.
async fn sealed(app: &TestApp, company_id: Uuid) -> Vec<(i64, Uuid)> {
    Query::new(
        "SELECT seq, id FROM audit_entries WHERE company_id = $1 AND seq IS NOT NULL ORDER BY seq",
    )
    .bind(company_id)
    .fetch_all(&app.state.db)
    .await
    .expect("entries")
}

/// A chain of the company's entity and key (entries 1 and 2) and four
/// roles, sealed.
async fn sealed_chain(app: &TestApp) -> (TestCompany, Vec<(i64, Uuid)>) {
    let acme = app.company().await;
    changes(app, &acme, 0, 4).await;
    seal(app, acme.company.id).await;
    let entries = sealed(app, acme.company.id).await;
    assert_eq!(entries.len(), 6);
    (acme, entries)
}

async fn a_sealed_chain_verifies_whole(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let (acme, entries) = sealed_chain(&app).await;

    assert_eq!(
        entries.iter().map(|(seq, _)| *seq).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5, 6]
    );
    assert_eq!(
        verdict(&app, acme.company.id).await,
        Verdict::Whole { from: 1, up_to: 6 }
    );
}

async fn entries_sealed_later_continue_the_chain(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let (acme, _) = sealed_chain(&app).await;

    changes(&app, &acme, 5, 2).await;
    seal(&app, acme.company.id).await;

    assert_eq!(
        verdict(&app, acme.company.id).await,
        Verdict::Whole { from: 1, up_to: 8 }
    );
    let page = app.get("/audit-log?limit=1", &acme.key).await;
    let newest = &page.assert_status(200)["data"][0];
    assert_eq!(newest["seq"], 8);
    let seventh: String =
        Query::new("SELECT hash FROM audit_entries WHERE company_id = $1 AND seq = 7")
            .bind(acme.company.id)
            .fetch_scalar(&app.state.db)
            .await
            .expect("hash");
    assert_eq!(newest["prevHash"], seventh);
}

async fn a_changed_entry_is_named(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let (acme, entries) = sealed_chain(&app).await;
    let (seq, id) = entries[3];

    Query::new(
        "UPDATE audit_entries SET changes = '{\"after\":{\"name\":\"forged\"}}' WHERE id = $1",
    )
    .bind(id)
    .execute(&app.state.db)
    .await
    .expect("tampered");

    assert_eq!(
        verdict(&app, acme.company.id).await,
        Verdict::Broken {
            seq,
            id: Some(id),
            problem: Problem::Changed
        }
    );
}

async fn a_removed_entry_is_named(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let (acme, entries) = sealed_chain(&app).await;
    let (seq, id) = entries[2];

    Query::new("DELETE FROM audit_entries WHERE id = $1")
        .bind(id)
        .execute(&app.state.db)
        .await
        .expect("deleted");

    assert_eq!(
        verdict(&app, acme.company.id).await,
        Verdict::Broken {
            seq,
            id: None,
            problem: Problem::Removed
        }
    );
}

async fn a_removed_last_entry_is_named(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let (acme, entries) = sealed_chain(&app).await;
    let (seq, id) = entries[5];

    Query::new("DELETE FROM audit_entries WHERE id = $1")
        .bind(id)
        .execute(&app.state.db)
        .await
        .expect("deleted");

    assert_eq!(
        verdict(&app, acme.company.id).await,
        Verdict::Broken {
            seq,
            id: None,
            problem: Problem::Removed
        }
    );
}

async fn swapped_entries_are_named(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let (acme, entries) = sealed_chain(&app).await;
    let ((second_seq, second), (third_seq, third)) = (entries[1], entries[2]);

    for (id, seq) in [(second, -1), (third, second_seq), (second, third_seq)] {
        Query::new("UPDATE audit_entries SET seq = $2 WHERE id = $1")
            .bind(id)
            .bind(seq)
            .execute(&app.state.db)
            .await
            .expect("swapped");
    }

    assert_eq!(
        verdict(&app, acme.company.id).await,
        Verdict::Broken {
            seq: second_seq,
            id: Some(third),
            problem: Problem::Reordered
        }
    );
}

async fn the_verify_command_names_the_entry(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let (acme, entries) = sealed_chain(&app).await;
    let company = acme.company.id;
    let (whole, ok) = supportdesk::cli::audit::verify_report(&app.state.db, company)
        .await
        .expect("report");
    assert!(ok);
    assert_eq!(
        whole,
        format!("audit chain of company {company}: whole from entry 1 up to entry 6")
    );
    let (seq, id) = entries[4];
    Query::new("UPDATE audit_entries SET actor_name = 'someone else' WHERE id = $1")
        .bind(id)
        .execute(&app.state.db)
        .await
        .expect("tampered");

    let (broken, ok) = supportdesk::cli::audit::verify_report(&app.state.db, company)
        .await
        .expect("report");

    assert!(!ok);
    assert_eq!(
        broken,
        format!("audit chain of company {company}: broken at entry {seq} ({id}): it was changed")
    );
}

async fn retention_keeps_the_rest_verifiable(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    changes(&app, &acme, 0, 2).await;
    app.state.clock.advance(Duration::days(40));
    let cut = app.state.clock.now();
    changes(&app, &acme, 3, 2).await;
    seal(&app, acme.company.id).await;

    let dropped = supportdesk::audit::prune::prune(&app.state.db, acme.company.id, cut, cut)
        .await
        .expect("pruned");

    assert_eq!(dropped, 4);
    let left: Vec<i64> = sealed(&app, acme.company.id)
        .await
        .into_iter()
        .map(|(seq, _)| seq)
        .collect();
    assert_eq!(left, [5, 6]);
    assert_eq!(
        verdict(&app, acme.company.id).await,
        Verdict::Whole { from: 5, up_to: 6 }
    );
    // The cut's own entry (7) and a new one (8) continue the chain.
    changes(&app, &acme, 5, 1).await;
    seal(&app, acme.company.id).await;
    assert_eq!(
        verdict(&app, acme.company.id).await,
        Verdict::Whole { from: 5, up_to: 8 }
    );
}

async fn an_entry_is_unsealed_until_the_sealer_runs(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    changes(&app, &acme, 0, 1).await;

    let entry = super::only_entry(&app, &acme, "role.created").await;
    assert_eq!(entry["seq"], serde_json::Value::Null);
    assert_eq!(entry["hash"], serde_json::Value::Null);

    seal(&app, acme.company.id).await;
    let entry = super::only_entry(&app, &acme, "role.created").await;
    // After the company's entity and key.
    assert_eq!(entry["seq"], 3);
    assert_eq!(entry["hash"].as_str().map(str::len), Some(64));
}

async fn a_committed_entry_wakes_the_sealer(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    // A sealer whose poll never comes in this test: only a commit's ring
    // can wake it.
    let state = &app.state;
    let hour = std::time::Duration::from_secs(3600);
    let worker = supportdesk::audit::sealer::spawn_polling(
        state.db.clone(),
        state.clock.clone(),
        state.shutdown.clone(),
        hour,
    );

    changes(&app, &acme, 0, 1).await;

    // The company's entity and key, then the role.
    eventually("the role's entry sealed", async || {
        sealed(&app, acme.company.id).await.len() == 3
    })
    .await;
    worker.abort();
}
