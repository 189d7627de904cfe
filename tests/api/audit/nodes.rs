//! Two nodes writing one company's entries at once, both sealing (their
//! workers and explicit passes racing), make one unbroken chain: on
//! Postgres with Redis between them, on SQLite two nodes on one file.

use std::time::Duration;

use serde_json::json;
use supportdesk::audit::verify::Verdict;
use supportdesk::db::Query;

use super::verdict;
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany, eventually_within};

backend_tests!(two_nodes_make_one_unbroken_chain);

/// Creates `count` roles named `prefix n` on `node`.
async fn roles_on(node: &TestApp, acme: &TestCompany, prefix: &str, count: usize) {
    for n in 0..count {
        node.post(
            "/roles",
            &acme.key,
            json!({"name": format!("{prefix} {n}"), "scopes": ["tickets:read"]}),
        )
        .await
        .assert_status(201);
    }
}

/// Seals the company's entries on `node` `rounds` times.
async fn seal_on(node: &TestApp, company: uuid::Uuid, rounds: usize) {
    for _ in 0..rounds {
        supportdesk::audit::sealer::seal_company(&node.state.db, &node.state.clock, company)
            .await
            .expect("sealed");
    }
}

async fn two_nodes_make_one_unbroken_chain(backend: Backend) {
    let one = TestApp::spawn(backend).await;
    let two = one.spawn_peer().await;
    let acme = one.company().await;
    let company = acme.company.id;

    tokio::join!(
        roles_on(&one, &acme, "One", 15),
        roles_on(&two, &acme, "Two", 15),
        seal_on(&one, company, 10),
        seal_on(&two, company, 10),
    );
    tokio::join!(seal_on(&one, company, 1), seal_on(&two, company, 1));

    let unsealed = async || -> i64 {
        Query::new("SELECT COUNT(*) FROM audit_entries WHERE company_id = $1 AND seq IS NULL")
            .bind(company)
            .fetch_scalar(&one.state.db)
            .await
            .expect("count")
    };
    eventually_within("every entry sealed", Duration::from_secs(15), async || {
        unsealed().await == 0
    })
    .await;
    // The company's entity, its key and thirty roles.
    assert_eq!(
        verdict(&one, company).await,
        Verdict::Whole { from: 1, up_to: 32 }
    );
}
