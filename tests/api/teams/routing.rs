//! Live routing of new chats: least busy and round robin below capacity,
//! the FIFO queue and its positions, manual assignment, absent agents.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Value, json};
use uuid::Uuid;

use super::{agents, assigned_events, assignee, chat, online, routed_team, session, visitor};
use crate::backend_tests;
use crate::chat::{agent, id_of};
use crate::support::{Backend, TestApp, TestCompany, eventually};

backend_tests!(
    least_busy_fills_each_agent_to_capacity_and_queues_the_rest_in_order,
    a_closed_chat_gives_its_agent_the_first_queued_chat_and_positions_move_up,
    an_agent_coming_online_takes_queued_chats_up_to_capacity,
    routing_emits_chat_assigned_with_reason_and_team,
    round_robin_rotates_and_the_rotation_survives_a_restart,
    a_manual_assignment_is_never_overridden_by_routing,
    an_absent_agent_gets_nothing_new_and_loses_unanswered_chats_after_the_grace_period,
    an_agent_online_as_private_gets_no_new_chat_while_a_public_one_does,
);

/// 3 online agents, `least_busy`, capacity 2, and 10 new chats.
async fn ten_chats_for_three(app: &TestApp, acme: &TestCompany) -> (Vec<Uuid>, Vec<Value>) {
    let team_agents = agents(app, acme, 3).await;
    routed_team(app, acme, &team_agents, "least_busy", 2).await;
    for &a in &team_agents {
        online(app, acme, a).await;
    }
    let mut chats = Vec::new();
    for _ in 0..10 {
        chats.push(chat(app, acme).await);
    }
    (team_agents, chats)
}

async fn least_busy_fills_each_agent_to_capacity_and_queues_the_rest_in_order(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (team_agents, chats) = ten_chats_for_three(&app, &acme).await;

    let mut per_agent: HashMap<Uuid, usize> = HashMap::new();
    for created in &chats[..6] {
        let agent = assignee(created).expect("the first six are assigned");
        *per_agent.entry(agent).or_default() += 1;
    }
    let expected: HashMap<Uuid, usize> = team_agents.iter().map(|&a| (a, 2)).collect();
    assert_eq!(per_agent, expected);
    for created in &chats[6..] {
        assert_eq!(assignee(created), None, "{created}");
    }
    for (i, created) in chats[6..].iter().enumerate() {
        let mut socket = visitor(&app, created).await;
        let frame = socket.next_of("queue").await;
        assert_eq!(frame["data"]["position"], json!(i + 1), "{frame}");
    }
}

async fn a_closed_chat_gives_its_agent_the_first_queued_chat_and_positions_move_up(
    backend: Backend,
) {
    // The routing worker's periodic pass would also drain the queue; with
    // it an hour away, only the close itself can hand the chat over.
    let app = TestApp::spawn_with(backend, |config| {
        config.routing_tick = Duration::from_secs(3600);
    })
    .await;
    let acme = app.company().await;
    let (_, chats) = ten_chats_for_three(&app, &acme).await;
    let mut first_queued = visitor(&app, &chats[6]).await;
    first_queued.next_of("queue").await;
    let mut others = Vec::new();
    for created in &chats[7..] {
        let mut socket = visitor(&app, created).await;
        socket.next_of("queue").await;
        others.push(socket);
    }
    let freed = assignee(&chats[0]).expect("assigned");

    app.patch(
        &format!("/chat/sessions/{}", id_of(&chats[0])),
        &acme.key,
        json!({ "status": "CLOSED" }),
    )
    .await
    .assert_status(200);
    let frame = first_queued.next_of("assignment").await;

    // The visitor hears that an agent took the chat (by name, not id).
    assert_eq!(frame["data"]["assigned"], true, "{frame}");
    let taken = session(&app, &acme, &id_of(&chats[6])).await;
    assert_eq!(assignee(&taken), Some(freed));
    for (i, socket) in others.iter_mut().enumerate() {
        let frame = socket.next_of("queue").await;
        assert_eq!(frame["data"]["position"], json!(i + 1), "{frame}");
    }
}

async fn an_agent_coming_online_takes_queued_chats_up_to_capacity(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (mut team_agents, chats) = ten_chats_for_three(&app, &acme).await;
    let late = agent(&app, &acme, "Late").await;
    team_agents.push(late);
    let team = id_of(&app.get("/teams", &acme.key).await.assert_status(200)["data"][0]);
    app.patch(
        &format!("/teams/{team}"),
        &acme.key,
        json!({ "memberIds": team_agents }),
    )
    .await
    .assert_status(200);

    online(&app, &acme, late).await;

    let mut assignees = Vec::new();
    for created in &chats[6..] {
        assignees.push(assignee(&session(&app, &acme, &id_of(created)).await));
    }
    assert_eq!(assignees, [Some(late), Some(late), None, None]);
}

async fn routing_emits_chat_assigned_with_reason_and_team(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let team_agents = agents(&app, &acme, 1).await;
    let team = routed_team(&app, &acme, &team_agents, "least_busy", 2).await;
    online(&app, &acme, team_agents[0]).await;

    let created = chat(&app, &acme).await;

    let events = assigned_events(&app, &acme).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["session"]["id"], created["id"]);
    assert_eq!(
        events[0]["assignment"],
        json!({"reason": "routing", "teamId": team, "assigneeId": team_agents[0]})
    );
}

async fn round_robin_rotates_and_the_rotation_survives_a_restart(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let team_agents = agents(&app, &acme, 3).await;
    routed_team(&app, &acme, &team_agents, "round_robin", 10).await;
    for &a in &team_agents {
        online(&app, &acme, a).await;
    }
    let mut order = Vec::new();
    for _ in 0..4 {
        order.push(assignee(&chat(&app, &acme).await).expect("assigned"));
    }

    let restarted = app.spawn_peer().await;
    app.stop().await;
    for &a in &team_agents {
        online(&restarted, &acme, a).await;
    }
    for _ in 0..5 {
        order.push(assignee(&chat(&restarted, &acme).await).expect("assigned"));
    }

    let rotation: Vec<Uuid> = (0..9).map(|i| team_agents[i % 3]).collect();
    assert_eq!(order, rotation);
}

async fn a_manual_assignment_is_never_overridden_by_routing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let team_agents = agents(&app, &acme, 2).await;
    routed_team(&app, &acme, &team_agents, "least_busy", 5).await;
    let queued = chat(&app, &acme).await;
    let id = id_of(&queued);
    let chosen = team_agents[1];
    app.patch(
        &format!("/chat/sessions/{id}"),
        &acme.key,
        json!({ "assigneeId": chosen }),
    )
    .await
    .assert_status(200);

    // The other member comes online with room to spare, and the periodic
    // drain runs: neither touches the chat.
    online(&app, &acme, team_agents[0]).await;
    supportdesk::teams::routing::tick(&(&app.state).into())
        .await
        .expect("tick");

    assert_eq!(assignee(&session(&app, &acme, &id).await), Some(chosen));
    let reasons: Vec<Value> = assigned_events(&app, &acme)
        .await
        .iter()
        .map(|e| e["assignment"]["reason"].clone())
        .collect();
    assert_eq!(reasons, [json!("manual")]);
}

async fn an_absent_agent_gets_nothing_new_and_loses_unanswered_chats_after_the_grace_period(
    backend: Backend,
) {
    let app = TestApp::spawn_with(backend, |config| {
        config.reassign_after = Duration::from_millis(300);
    })
    .await;
    let acme = app.company().await;
    let team_agents = agents(&app, &acme, 1).await;
    routed_team(&app, &acme, &team_agents, "least_busy", 5).await;
    online(&app, &acme, team_agents[0]).await;
    let first = chat(&app, &acme).await;
    assert_eq!(assignee(&first), Some(team_agents[0]));

    app.delete(
        &format!("/chat/agent-presence/{}", team_agents[0]),
        &acme.key,
    )
    .await
    .assert_status(200);
    let second = chat(&app, &acme).await;

    assert_eq!(assignee(&second), None);
    let id = id_of(&first);
    eventually("the unanswered chat is requeued", || async {
        assignee(&session(&app, &acme, &id).await).is_none()
    })
    .await;
    let last = assigned_events(&app, &acme).await.pop().expect("events");
    assert_eq!(last["assignment"]["reason"], "requeue");
}

async fn an_agent_online_as_private_gets_no_new_chat_while_a_public_one_does(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let team_agents = agents(&app, &acme, 2).await;
    let (busy, free) = (team_agents[0], team_agents[1]);
    // Least busy alternates between idle members: without the visibility
    // both would get chats.
    routed_team(&app, &acme, &team_agents, "least_busy", 5).await;
    online(&app, &acme, busy).await;
    online(&app, &acme, free).await;
    // Turning PRIVATE, still online.
    app.post(
        "/chat/agent-presence",
        &acme.key,
        json!({ "userId": busy, "visibility": "PRIVATE" }),
    )
    .await
    .assert_status(200);

    let mut assignees = Vec::new();
    for _ in 0..3 {
        assignees.push(assignee(&chat(&app, &acme).await));
    }

    assert_eq!(assignees, [Some(free), Some(free), Some(free)]);
}
