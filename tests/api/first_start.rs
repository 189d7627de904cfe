//! Nodes starting together on a database no node has started on: each
//! runs the migrations and, with the demo on, looks for the demo company;
//! both must start, and exactly one demo company be made.

use supportdesk::App;

use crate::backend_tests;
use crate::support::{Backend, EmptyDatabase};

backend_tests!(two_nodes_starting_together_on_an_empty_database_both_start);

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
