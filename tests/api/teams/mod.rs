//! Teams and live routing: the team resource (`crud`), and the assignment of
//! new chats to online members below capacity, the visitor queue, manual
//! assignment and the requeue of an absent agent's chats (`routing`).
//! Shared helpers here.

mod agent_channel;
mod crud;
mod frames;
mod load;
mod nodes;
mod routing;
mod tickets;

use serde_json::{Value, json};
use uuid::Uuid;

use crate::chat::{agent, client::Client, tenant};
use crate::support::{TestApp, TestCompany};

/// `n` agents of the company, in id order (the round robin's order).
async fn agents(app: &TestApp, acme: &TestCompany, n: usize) -> Vec<Uuid> {
    let mut ids = Vec::new();
    for i in 0..n {
        ids.push(agent(app, acme, &format!("Agent{i}")).await);
    }
    ids.sort();
    ids
}

/// Sets the agent online (PUBLIC) with a heartbeat.
async fn online(app: &TestApp, acme: &TestCompany, user: Uuid) {
    app.post("/chat/agent-presence", &acme.key, json!({ "userId": user }))
        .await
        .assert_status(200);
}

/// A team of `members` routed by `mode` with `chatCapacity` `capacity`,
/// made the default team of the company's entity. Returns its id.
async fn routed_team(
    app: &TestApp,
    acme: &TestCompany,
    members: &[Uuid],
    mode: &str,
    capacity: i64,
) -> String {
    let team = app
        .post(
            "/teams",
            &acme.key,
            json!({
                "name": "Support",
                "memberIds": members,
                "entityIds": [acme.entity.id],
                "routing": { "mode": mode, "chatCapacity": capacity },
            }),
        )
        .await
        .assert_status(201)
        .clone();
    let id = team["id"].as_str().expect("team id").to_string();
    app.patch(
        &format!("/entities/{}", acme.entity.id),
        &acme.key,
        json!({ "defaultTeamId": id }),
    )
    .await
    .assert_status(200);
    id
}

/// A new chat of the entity (joins its default team); the created session
/// with its `visitorToken`.
async fn chat(app: &TestApp, acme: &TestCompany) -> Value {
    app.post(
        "/chat/sessions",
        &acme.key,
        json!({ "entityId": acme.entity.id }),
    )
    .await
    .assert_status(201)
    .clone()
}

fn assignee(session: &Value) -> Option<Uuid> {
    session["assigneeId"]
        .as_str()
        .map(|raw| Uuid::parse_str(raw).expect("assignee id"))
}

async fn session(app: &TestApp, acme: &TestCompany, id: &str) -> Value {
    app.get(&format!("/chat/sessions/{id}"), &acme.key)
        .await
        .assert_status(200)
        .clone()
}

/// The visitor's socket, subscribed to its session.
async fn visitor(app: &TestApp, created: &Value) -> Client {
    let token = created["visitorToken"].as_str().expect("visitor token");
    let mut client = Client::token(app, token).await;
    let id = created["id"].as_str().expect("id");
    client.subscribe(&format!("session:{id}")).await;
    client
}

/// Data of the company's `chat.assigned` events, oldest first.
async fn assigned_events(app: &TestApp, acme: &TestCompany) -> Vec<Value> {
    let rows = supportdesk::on_db!(&app.state.db, c => sqlx::query_as::<_, (sqlx::types::Json<Value>,)>(
        "SELECT data FROM events WHERE company_id = $1 AND name = 'chat.assigned' \
         ORDER BY created_at, id")
        .bind(tenant(acme).company_id)
        .fetch_all(c)
        .await
        .expect("events read"));
    rows.into_iter().map(|(data,)| data.0).collect()
}
