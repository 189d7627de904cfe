//! Nodes starting together on a database no node has started on: each
//! runs the migrations and, with the demo on, looks for the demo company;
//! both must start, and exactly one demo company be made.

use std::time::Duration;

use sqlx::Connection;
use supportdesk::App;

use crate::support::{Backend, EmptyDatabase, eventually};
use crate::{backend_tests, postgres_tests};

backend_tests!(two_nodes_starting_together_on_an_empty_database_both_start);
postgres_tests!(a_node_waiting_for_another_nodes_demo_outwaits_the_statement_timeout);

/// Rounds of the race, each on a database of its own: a start takes long
/// enough that the two nodes' migrations and demo checks overlap.
const ROUNDS: usize = 3;

async fn two_nodes_starting_together_on_an_empty_database_both_start(backend: Backend) {
    for round in 0..ROUNDS {
        let fresh = EmptyDatabase::create(backend).await;
        let node = || {
            let mut config = fresh.config(backend);
            config.demo = true;
            config.bootstrap_demo = true;
            App::build(config)
        };
        let (first, second) = tokio::join!(node(), node());
        let first = first.unwrap_or_else(|e| panic!("round {round}: the first node starts: {e:#}"));
        let second =
            second.unwrap_or_else(|e| panic!("round {round}: the second node starts: {e:#}"));
        let demos = [&first, &second]
            .iter()
            .filter(|app| app.demo.is_some())
            .count();
        assert_eq!(demos, 1, "round {round}: one node made the demo");
        let companies = supportdesk::companies::store::count(&first.state().db)
            .await
            .expect("companies counted");
        assert_eq!(companies, 1, "round {round}");
        first.state().db.close().await;
        second.state().db.close().await;
    }
}

/// The statement timeout the node below starts with; it waits for the
/// demo's lock longer than that.
const TIMEOUT: Duration = Duration::from_secs(1);

/// Another node holds the demo's lock (the test, standing for a node whose
/// demo takes long) past the statement timeout: the node waiting for it
/// still starts once it is released, and finds the demo to make.
async fn a_node_waiting_for_another_nodes_demo_outwaits_the_statement_timeout(backend: Backend) {
    let fresh = EmptyDatabase::create(backend).await;
    let migrated = App::build(fresh.config(backend)).await.expect("migrated");
    let mut other = sqlx::PgConnection::connect(&fresh.url)
        .await
        .expect("the other node's connection");
    sqlx::query("SELECT pg_advisory_lock($1)")
        .bind(supportdesk::bootstrap::DEMO_LOCK)
        .execute(&mut other)
        .await
        .expect("the demo's lock");
    let mut config = fresh.config(backend);
    config.demo = true;
    config.bootstrap_demo = true;
    config.statement_timeout = Some(TIMEOUT);
    // The lock is released once the node has waited past its timeout.
    let other_node = async {
        eventually("the node waits for the lock past its timeout", async || {
            let waited: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM pg_stat_activity \
                 WHERE datname = current_database() AND wait_event = 'advisory' \
                 AND query_start < now() - make_interval(secs => $1)",
            )
            .bind(TIMEOUT.as_secs_f64() * 1.5)
            .fetch_one(&mut other)
            .await
            .expect("pg_stat_activity");
            waited > 0
        })
        .await;
        other.close().await.expect("the lock released");
    };
    let (started, ()) = tokio::join!(App::build(config), other_node);

    let node = started.expect("the node starts");
    assert!(node.demo.is_some(), "the node made the demo");
    node.state().db.close().await;
    migrated.state().db.close().await;
}
