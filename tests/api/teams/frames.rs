//! Routing's socket frames where agents' consoles listen: `assignment` on
//! the chat's entity channel and on its team's (the entity channels of the
//! team's `entityIds`), and the team's queue length on them.

use serde_json::json;

use super::{agents, chat, online, routed_team};
use crate::backend_tests;
use crate::chat::client::Client;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    the_assignee_finds_a_routed_chat_on_its_entity_channel,
    an_assignment_reaches_the_channels_of_the_teams_other_entities,
    the_queue_length_reaches_the_entity_channel,
    a_chat_assigned_at_once_pushes_no_queue_length,
);

/// A second entity of the company, made one of the routed team's.
async fn second_team_entity(app: &TestApp, acme: &TestCompany, team: &str) -> uuid::Uuid {
    let second = supportdesk::entities::store::create(
        &app.state.db,
        acme.company.id,
        "Two",
        None,
        app.state.clock.now(),
    )
    .await
    .expect("entity")
    .id;
    app.patch(
        &format!("/teams/{team}"),
        &acme.key,
        json!({ "entityIds": [acme.entity.id, second] }),
    )
    .await
    .assert_status(200);
    second
}

async fn the_assignee_finds_a_routed_chat_on_its_entity_channel(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let team_agents = agents(&app, &acme, 1).await;
    let team = routed_team(&app, &acme, &team_agents, "least_busy", 2).await;
    online(&app, &acme, team_agents[0]).await;
    let mut console = Client::key(&app, &acme.key).await;
    console
        .subscribe(&format!("entity:{}", acme.entity.id))
        .await;

    let created = chat(&app, &acme).await;

    let frame = console.next_of("assignment").await;
    assert_eq!(frame["data"]["sessionId"], created["id"], "{frame}");
    assert_eq!(
        frame["data"]["assignment"],
        json!({"reason": "routing", "teamId": team, "assigneeId": team_agents[0]})
    );
}

async fn an_assignment_reaches_the_channels_of_the_teams_other_entities(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let team_agents = agents(&app, &acme, 1).await;
    let team = routed_team(&app, &acme, &team_agents, "least_busy", 2).await;
    let second = second_team_entity(&app, &acme, &team).await;
    online(&app, &acme, team_agents[0]).await;
    let mut team_console = Client::key(&app, &acme.key).await;
    team_console.subscribe(&format!("entity:{second}")).await;

    let created = chat(&app, &acme).await;

    let frame = team_console.next_of("assignment").await;
    assert_eq!(frame["channel"], format!("entity:{second}"), "{frame}");
    assert_eq!(frame["data"]["sessionId"], created["id"], "{frame}");
    assert_eq!(frame["data"]["assigneeId"], json!(team_agents[0]));
}

async fn the_queue_length_reaches_the_entity_channel(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let team_agents = agents(&app, &acme, 1).await;
    // Nobody online: every chat waits.
    let team = routed_team(&app, &acme, &team_agents, "least_busy", 2).await;
    let mut console = Client::key(&app, &acme.key).await;
    console
        .subscribe(&format!("entity:{}", acme.entity.id))
        .await;

    chat(&app, &acme).await;
    let first = console.next_of("queue").await;
    chat(&app, &acme).await;
    let second = console.next_of("queue").await;

    assert_eq!(
        first["data"],
        json!({"teamId": team, "length": 1}),
        "{first}"
    );
    assert_eq!(
        second["data"],
        json!({"teamId": team, "length": 2}),
        "{second}"
    );
}

async fn a_chat_assigned_at_once_pushes_no_queue_length(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let team_agents = agents(&app, &acme, 1).await;
    let team = routed_team(&app, &acme, &team_agents, "least_busy", 2).await;
    online(&app, &acme, team_agents[0]).await;
    let mut console = Client::key(&app, &acme.key).await;
    console
        .subscribe(&format!("entity:{}", acme.entity.id))
        .await;
    // Assigned as it arrives: the queue stays empty.
    chat(&app, &acme).await;
    app.delete(
        &format!("/chat/agent-presence/{}", team_agents[0]),
        &acme.key,
    )
    .await
    .assert_status(200);

    // Nobody is available: this one waits, and the length moves to 1.
    chat(&app, &acme).await;

    let first = console.next_of("queue").await;
    assert_eq!(
        first["data"],
        json!({"teamId": team, "length": 1}),
        "{first}"
    );
}
