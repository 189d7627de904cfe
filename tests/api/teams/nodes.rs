//! Two nodes routing one team at once: the claim is atomic across nodes.

use std::collections::{HashMap, HashSet};

use serde_json::json;
use uuid::Uuid;

use super::{agents, assigned_events, chat, online, routed_team};
use crate::backend_tests;
use crate::chat::tenant;
use crate::support::{Backend, TestApp, eventually};

backend_tests!(
    two_nodes_never_assign_beyond_capacity_nor_one_chat_twice,
    a_drain_that_finds_no_queue_does_not_wait_for_the_teams_lock,
);

async fn two_nodes_never_assign_beyond_capacity_nor_one_chat_twice(backend: Backend) {
    let first = TestApp::spawn(backend).await;
    let second = first.spawn_peer().await;
    let acme = first.company().await;
    let team_agents = agents(&first, &acme, 5).await;
    let team = routed_team(&first, &acme, &team_agents, "least_busy", 10).await;
    for &a in &team_agents {
        // Without Redis each node knows only its own heartbeats.
        online(&first, &acme, a).await;
        online(&second, &acme, a).await;
    }

    let creates = (0..200).map(|i| {
        let node = if i % 2 == 0 { &first } else { &second };
        chat(node, &acme)
    });
    futures::future::join_all(creates).await;
    // No chat closes, so an agent's count only grows: the events at the end
    // show the most any agent ever held.
    eventually("every agent is at capacity", || async {
        assigned_events(&first, &acme).await.len() >= 50
    })
    .await;
    let at_capacity = assigned_events(&first, &acme).await;
    first
        .patch(
            &format!("/teams/{team}"),
            &acme.key,
            json!({"routing": {"chatCapacity": 40}}),
        )
        .await
        .assert_status(200);
    eventually("the queue drains", || async {
        first.get(&format!("/teams/{team}"), &acme.key).await.body["queueLength"] == 0
    })
    .await;
    let all = assigned_events(&first, &acme).await;

    let mut per_agent: HashMap<String, usize> = HashMap::new();
    for event in &at_capacity {
        let agent = event["assignment"]["assigneeId"].as_str().expect("agent");
        *per_agent.entry(agent.to_string()).or_default() += 1;
    }
    let full: HashMap<String, usize> = team_agents.iter().map(|a| (a.to_string(), 10)).collect();
    assert_eq!(per_agent, full);
    let sessions: HashSet<Uuid> = all
        .iter()
        .map(|e| Uuid::parse_str(e["session"]["id"].as_str().expect("id")).expect("uuid"))
        .collect();
    assert_eq!((all.len(), sessions.len()), (200, 200));
    second.stop().await;
}

async fn a_drain_that_finds_no_queue_does_not_wait_for_the_teams_lock(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let team_agents = agents(&app, &acme, 1).await;
    let team = routed_team(&app, &acme, &team_agents, "least_busy", 5).await;
    let team = Uuid::parse_str(&team).expect("team id");
    online(&app, &acme, team_agents[0]).await;
    // A claim in progress elsewhere: it holds the team's row (Postgres) or
    // the write lock (SQLite) until it ends.
    let mut claiming = app.state.db.begin().await.expect("transaction");
    let lock = match backend {
        Backend::Postgres => "SELECT id FROM teams WHERE id = $1 FOR NO KEY UPDATE",
        Backend::Sqlite => "SELECT id FROM teams WHERE id = $1",
    };
    supportdesk::db::Query::new(lock)
        .bind(team)
        .execute(&mut claiming)
        .await
        .expect("team locked");

    // Only a guard against hanging: a drain that waited would wait until
    // the transaction above ends, which it does after this.
    let drained = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        supportdesk::teams::routing::drain(&(&app.state).into(), &tenant(&acme), team),
    )
    .await;

    assert!(
        matches!(drained, Ok(Ok(false))),
        "the empty queue's drain waited or failed: {drained:?}"
    );
    drop(claiming);
}
