//! The `agent:<userId>` socket channel: the `assignment` frames of the
//! chats given to or taken from one user, and who may subscribe to it.

use serde_json::{Value, json};
use uuid::Uuid;

use super::{agents, chat, online, routed_team, visitor};
use crate::backend_tests;
use crate::chat::client::Client;
use crate::chat::{agent, id_of};
use crate::support::{Backend, TestApp};

backend_tests!(
    an_agent_channel_carries_its_users_assignments_and_not_the_others,
    a_reassigned_chat_reaches_the_channel_of_the_agent_it_was_taken_from,
    a_visitor_cannot_subscribe_to_an_agent_channel,
    an_agent_channel_of_a_user_outside_the_company_is_not_found,
);

/// The session ids of the `assignment` frames `socket` receives up to and
/// including the one of `last`.
async fn assignments_until(socket: &mut Client, last: &Value) -> Vec<Value> {
    let mut sessions = Vec::new();
    loop {
        let frame = socket.next_of("assignment").await;
        sessions.push(frame["data"]["sessionId"].clone());
        if frame["data"]["sessionId"] == last["id"] {
            return sessions;
        }
    }
}

async fn an_agent_channel_carries_its_users_assignments_and_not_the_others(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let team_agents = agents(&app, &acme, 2).await;
    let (mine, other) = (team_agents[0], team_agents[1]);
    // Least busy alternates: the lowest id first, then the other, then back.
    routed_team(&app, &acme, &team_agents, "least_busy", 5).await;
    online(&app, &acme, mine).await;
    online(&app, &acme, other).await;
    let mut console = Client::key(&app, &acme.key).await;
    console.subscribe(&format!("agent:{mine}")).await;

    let first = chat(&app, &acme).await;
    let theirs = chat(&app, &acme).await;
    let third = chat(&app, &acme).await;

    assert_eq!(super::assignee(&theirs), Some(other));
    // The other agent's frame would have come between the two.
    assert_eq!(
        assignments_until(&mut console, &third).await,
        [first["id"].clone(), third["id"].clone()]
    );
}

async fn a_reassigned_chat_reaches_the_channel_of_the_agent_it_was_taken_from(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let team_agents = agents(&app, &acme, 2).await;
    let (before, after) = (team_agents[0], team_agents[1]);
    routed_team(&app, &acme, &team_agents, "least_busy", 5).await;
    online(&app, &acme, before).await;
    let created = chat(&app, &acme).await;
    assert_eq!(super::assignee(&created), Some(before));
    let mut console = Client::key(&app, &acme.key).await;
    console.subscribe(&format!("agent:{before}")).await;

    app.patch(
        &format!("/chat/sessions/{}", id_of(&created)),
        &acme.key,
        json!({ "assigneeId": after }),
    )
    .await
    .assert_status(200);

    // The chat's first assignment (to `before`, by routing) was published
    // before the subscription and can still reach it: the manual one is
    // awaited.
    let frame = console
        .next_where(|f| f["type"] == "assignment" && f["data"]["assigneeId"] == json!(after))
        .await;
    assert_eq!(frame["channel"], format!("agent:{before}"), "{frame}");
    assert_eq!(
        frame["data"],
        json!({
            "sessionId": created["id"],
            "assigneeId": after,
            "assignment": {"reason": "manual", "teamId": created["teamId"], "assigneeId": after},
        })
    );
}

async fn a_visitor_cannot_subscribe_to_an_agent_channel(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let user = agent(&app, &acme, "Ann").await;
    let created = chat(&app, &acme).await;
    let mut widget = visitor(&app, &created).await;

    widget
        .send(json!({"type": "subscribe", "channel": format!("agent:{user}"), "id": 1}))
        .await;

    let refused = widget.next_of("error").await;
    assert_eq!(
        (refused["code"].as_str(), &refused["id"]),
        (Some("insufficient_scope"), &json!(1)),
        "{refused}"
    );
}

async fn an_agent_channel_of_a_user_outside_the_company_is_not_found(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let globex = app.company().await;
    let theirs: Uuid = agent(&app, &globex, "Gil").await;
    let mut console = Client::key(&app, &acme.key).await;

    console
        .send(json!({"type": "subscribe", "channel": format!("agent:{theirs}"), "id": 1}))
        .await;

    let refused = console.next_of("error").await;
    assert_eq!(
        (refused["code"].as_str(), &refused["id"]),
        (Some("not_found"), &json!(1)),
        "{refused}"
    );
}
