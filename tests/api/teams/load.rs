//! Each agent's count of open chats, which routing's claim reads instead of
//! counting sessions: every change of a chat's status or assignee keeps it
//! exact, seen through whom routing gives the next chat.

use std::time::Duration;

use serde_json::json;

use super::{agents, assignee, chat, online, routed_team, session};
use crate::backend_tests;
use crate::chat::id_of;
use crate::support::{Backend, TestApp, eventually};

backend_tests!(
    a_manual_reassignment_frees_the_place_of_the_agent_it_leaves,
    a_reopened_chat_takes_a_place_of_its_agent_again,
    a_requeued_chat_frees_its_agents_place,
);

async fn a_manual_reassignment_frees_the_place_of_the_agent_it_leaves(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let team_agents = agents(&app, &acme, 2).await;
    let (routed, other) = (team_agents[0], team_agents[1]);
    routed_team(&app, &acme, &[routed], "least_busy", 1).await;
    online(&app, &acme, routed).await;
    let first = chat(&app, &acme).await;
    app.patch(
        &format!("/chat/sessions/{}", id_of(&first)),
        &acme.key,
        json!({ "assigneeId": other }),
    )
    .await
    .assert_status(200);

    let second = chat(&app, &acme).await;

    assert_eq!(assignee(&second), Some(routed), "{second}");
}

async fn a_reopened_chat_takes_a_place_of_its_agent_again(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let team_agents = agents(&app, &acme, 1).await;
    routed_team(&app, &acme, &team_agents, "least_busy", 1).await;
    online(&app, &acme, team_agents[0]).await;
    let first = chat(&app, &acme).await;
    let status = |id: String, status: &'static str| {
        let app = &app;
        let key = acme.key.clone();
        async move {
            app.patch(
                &format!("/chat/sessions/{id}"),
                &key,
                json!({ "status": status }),
            )
            .await
            .assert_status(200);
        }
    };
    status(id_of(&first), "CLOSED").await;
    let second = chat(&app, &acme).await;
    // The agent now holds both chats, one above capacity; closing one
    // leaves them full.
    status(id_of(&first), "ACTIVE").await;
    status(id_of(&second), "CLOSED").await;

    let third = chat(&app, &acme).await;

    assert_eq!(assignee(&third), None, "{third}");
}

async fn a_requeued_chat_frees_its_agents_place(backend: Backend) {
    let app = TestApp::spawn_with(backend, |config| {
        config.reassign_after = Duration::from_millis(300);
    })
    .await;
    let acme = app.company().await;
    let team_agents = agents(&app, &acme, 1).await;
    routed_team(&app, &acme, &team_agents, "least_busy", 1).await;
    online(&app, &acme, team_agents[0]).await;
    let first = chat(&app, &acme).await;
    let id = id_of(&first);
    app.delete(
        &format!("/chat/agent-presence/{}", team_agents[0]),
        &acme.key,
    )
    .await
    .assert_status(200);
    eventually("the unanswered chat is requeued", || async {
        assignee(&session(&app, &acme, &id).await).is_none()
    })
    .await;

    online(&app, &acme, team_agents[0]).await;

    assert_eq!(
        assignee(&session(&app, &acme, &id).await),
        Some(team_agents[0])
    );
}
