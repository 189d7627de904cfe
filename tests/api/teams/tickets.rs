//! Tickets in teams: `teamId` on create, PATCH and the list, its timeline
//! entry and events, and the routing of unassigned tickets to online
//! members below the ticket capacity.

use serde_json::{Value, json};
use uuid::Uuid;

use super::{agents, online};
use crate::backend_tests;
use crate::chat::client::Client;
use crate::chat::id_of;
use crate::support::{Backend, TestApp, TestCompany, assert_invalid};

backend_tests!(
    a_ticket_joins_a_team_on_create_and_moves_team_on_patch,
    a_team_that_is_not_the_companys_is_refused_and_changes_nothing,
    a_routed_team_assigns_new_tickets_to_online_members_below_ticket_capacity,
    a_team_whose_routing_leaves_tickets_out_keeps_them_unassigned,
    a_ticket_patched_into_a_routed_team_is_assigned_by_routing,
    a_manual_assignment_of_a_ticket_is_never_overridden_by_routing,
    an_escalation_rule_sends_a_ticket_into_a_team_and_its_routing,
    an_escalation_rule_targets_only_teams_of_the_company,
    the_assignee_hears_of_a_routed_ticket_on_the_entitys_ticket_channel,
);

/// A team of `members` with `routing`; returns its id.
async fn team(app: &TestApp, acme: &TestCompany, members: &[Uuid], routing: Value) -> String {
    let created = app
        .post(
            "/teams",
            &acme.key,
            json!({ "name": "Billing", "memberIds": members, "routing": routing }),
        )
        .await
        .assert_status(201)
        .clone();
    id_of(&created)
}

async fn new_ticket(app: &TestApp, acme: &TestCompany, extra: Value) -> Value {
    let mut body = json!({ "subject": "Refund", "entityId": acme.entity.id });
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    app.post("/tickets", &acme.key, body)
        .await
        .assert_status(201)
        .clone()
}

/// Data of the company's `ticket.updated` events, oldest first.
async fn ticket_updates(app: &TestApp, acme: &TestCompany) -> Vec<Value> {
    crate::support::updated_events(app, acme.company.id).await
}

fn routing_on(mode: &str, capacity: i64) -> Value {
    json!({ "mode": mode, "ticketCapacity": capacity, "includeTickets": true })
}

async fn a_ticket_joins_a_team_on_create_and_moves_team_on_patch(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let first = team(&app, &acme, &[], json!({})).await;
    let second = team(&app, &acme, &[], json!({})).await;
    let created = new_ticket(&app, &acme, json!({ "teamId": first })).await;
    assert_eq!(created["teamId"], json!(first));
    let id = id_of(&created);

    let moved = app
        .patch(
            &format!("/tickets/{id}"),
            &acme.key,
            json!({ "teamId": second }),
        )
        .await
        .assert_status(200)
        .clone();

    assert_eq!(moved["teamId"], json!(second));
    let timeline = app
        .get(&format!("/tickets/{id}/activities"), &acme.key)
        .await
        .assert_status(200)
        .clone();
    let team_entries: Vec<&Value> = timeline["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter(|a| a["type"] == "team_changed")
        .collect();
    assert_eq!(team_entries.len(), 1, "{timeline}");
    assert_eq!(team_entries[0]["from"], json!(first));
    assert_eq!(team_entries[0]["to"], json!(second));
    let updates = ticket_updates(&app, &acme).await;
    assert_eq!(updates.len(), 1);
    assert_eq!(
        updates[0]["changes"]["teamId"],
        json!({ "from": first, "to": second })
    );
    assert_eq!(updates[0]["teamId"], json!(second));
}

async fn a_team_that_is_not_the_companys_is_refused_and_changes_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    let foreign = team(&app, &other, &[], json!({})).await;

    let refused = app
        .post(
            "/tickets",
            &acme.key,
            json!({ "subject": "Refund", "entityId": acme.entity.id, "teamId": foreign }),
        )
        .await;
    assert_invalid(&refused, &["teamId"]);
    let created = new_ticket(&app, &acme, json!({})).await;
    let id = id_of(&created);
    let patched = app
        .patch(
            &format!("/tickets/{id}"),
            &acme.key,
            json!({ "teamId": foreign }),
        )
        .await;
    assert_invalid(&patched, &["teamId"]);

    let list = app
        .get("/tickets", &acme.key)
        .await
        .assert_status(200)
        .clone();
    assert_eq!(list["total"], 1);
    assert_eq!(list["data"][0]["teamId"], Value::Null);
    assert!(ticket_updates(&app, &acme).await.is_empty());
}

async fn a_routed_team_assigns_new_tickets_to_online_members_below_ticket_capacity(
    backend: Backend,
) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let members = agents(&app, &acme, 2).await;
    let billing = team(&app, &acme, &members, routing_on("least_busy", 1)).await;
    for &member in &members {
        online(&app, &acme, member).await;
    }

    let mut assignees = Vec::new();
    for _ in 0..3 {
        let created = new_ticket(&app, &acme, json!({ "teamId": billing })).await;
        assert_eq!(created["teamId"], json!(billing));
        assignees.push(created["assignedToId"].clone());
    }

    assert_eq!(
        assignees,
        [json!(members[0]), json!(members[1]), Value::Null]
    );
    let updates = ticket_updates(&app, &acme).await;
    let assignments: Vec<&Value> = updates.iter().map(|u| &u["assignment"]).collect();
    let routed = json!({ "reason": "routing", "teamId": billing });
    assert_eq!(assignments, [&routed, &routed]);
}

async fn a_team_whose_routing_leaves_tickets_out_keeps_them_unassigned(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let members = agents(&app, &acme, 1).await;
    let routing = json!({ "mode": "least_busy", "ticketCapacity": 5, "includeTickets": false });
    let chats_only = team(&app, &acme, &members, routing).await;
    online(&app, &acme, members[0]).await;

    let created = new_ticket(&app, &acme, json!({ "teamId": chats_only })).await;

    assert_eq!(created["assignedToId"], Value::Null);
    assert_eq!(created["teamId"], json!(chats_only));
}

async fn a_ticket_patched_into_a_routed_team_is_assigned_by_routing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let members = agents(&app, &acme, 1).await;
    let billing = team(&app, &acme, &members, routing_on("round_robin", 5)).await;
    online(&app, &acme, members[0]).await;
    let id = id_of(&new_ticket(&app, &acme, json!({})).await);

    let moved = app
        .patch(
            &format!("/tickets/{id}"),
            &acme.key,
            json!({ "teamId": billing }),
        )
        .await
        .assert_status(200)
        .clone();

    assert_eq!(moved["assignedToId"], json!(members[0]));
    let fetched = app.get(&format!("/tickets/{id}"), &acme.key).await;
    assert_eq!(
        fetched.assert_status(200)["assignedToId"],
        json!(members[0])
    );
    let updates = ticket_updates(&app, &acme).await;
    assert_eq!(
        updates.last().expect("an update")["assignment"],
        json!({ "reason": "routing", "teamId": billing })
    );
}

async fn a_manual_assignment_of_a_ticket_is_never_overridden_by_routing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let members = agents(&app, &acme, 2).await;
    let billing = team(&app, &acme, &members, routing_on("least_busy", 5)).await;
    for &member in &members {
        online(&app, &acme, member).await;
    }
    let id = id_of(&new_ticket(&app, &acme, json!({})).await);
    let chosen = members[1];

    let patched = app
        .patch(
            &format!("/tickets/{id}"),
            &acme.key,
            json!({ "teamId": billing, "assignedToId": chosen }),
        )
        .await
        .assert_status(200)
        .clone();
    supportdesk::teams::routing::tick(&(&app.state).into())
        .await
        .expect("tick");

    assert_eq!(patched["assignedToId"], json!(chosen));
    let fetched = app.get(&format!("/tickets/{id}"), &acme.key).await;
    assert_eq!(fetched.assert_status(200)["assignedToId"], json!(chosen));
    let assignments: Vec<Value> = ticket_updates(&app, &acme)
        .await
        .iter()
        .map(|u| u["assignment"].clone())
        .collect();
    assert_eq!(
        assignments,
        [json!({ "reason": "manual", "teamId": billing })]
    );
}

async fn an_escalation_rule_sends_a_ticket_into_a_team_and_its_routing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let members = agents(&app, &acme, 1).await;
    let tier2 = team(&app, &acme, &members, routing_on("least_busy", 5)).await;
    online(&app, &acme, members[0]).await;
    let id = id_of(&new_ticket(&app, &acme, json!({ "priority": "HIGH" })).await);
    app.put(
        "/settings/escalation-rules",
        &acme.key,
        json!({ "rules": [{ "name": "High to tier 2",
            "conditions": { "priorities": ["HIGH"] },
            "action": { "escalateToTeamId": tier2 } }] }),
    )
    .await
    .assert_status(200);

    let fired = supportdesk::tickets::rules::run_pass_and_route(&(&app.state).into())
        .await
        .expect("pass");

    assert_eq!(fired, 1);
    let ticket = app.get(&format!("/tickets/{id}"), &acme.key).await;
    let ticket = ticket.assert_status(200);
    assert_eq!(ticket["teamId"], json!(tier2));
    assert_eq!(ticket["assignedToId"], json!(members[0]));
    let updates = ticket_updates(&app, &acme).await;
    assert_eq!(
        updates.last().expect("the routing's update")["assignment"],
        json!({ "reason": "routing", "teamId": tier2 })
    );
}

async fn an_escalation_rule_targets_only_teams_of_the_company(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    let foreign = team(&app, &other, &[], json!({})).await;

    let put = |action: Value| {
        let body = json!({ "rules": [{ "name": "To a team",
            "conditions": { "priorities": ["HIGH"] }, "action": action }] });
        app.put("/settings/escalation-rules", &acme.key, body)
    };

    let foreign_team = put(json!({ "escalateToTeamId": foreign })).await;
    let no_target = put(json!({ "reason": "nobody" })).await;

    assert_invalid(&foreign_team, &["rules[0].action.escalateToTeamId"]);
    assert_invalid(&no_target, &["rules[0].action.escalateToId"]);
    let rules = app.get("/settings/escalation-rules", &acme.key).await;
    assert_eq!(rules.assert_status(200)["rules"], json!([]));
}

/// Agents learn of their tickets where consoles already listen: the
/// `tickets:<entityId>` channel carries the routing's `ticket.updated`.
async fn the_assignee_hears_of_a_routed_ticket_on_the_entitys_ticket_channel(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let members = agents(&app, &acme, 1).await;
    let billing = team(&app, &acme, &members, routing_on("least_busy", 5)).await;
    online(&app, &acme, members[0]).await;
    let mut console = Client::key(&app, &acme.key).await;
    console
        .subscribe(&format!("tickets:{}", acme.entity.id))
        .await;

    let created = new_ticket(&app, &acme, json!({ "teamId": billing })).await;

    let frame = console.next_of("ticket.updated").await;
    assert_eq!(frame["data"]["data"]["id"], created["id"], "{frame}");
    assert_eq!(frame["data"]["data"]["assignedToId"], json!(members[0]));
    assert_eq!(
        frame["data"]["data"]["assignment"],
        json!({ "reason": "routing", "teamId": billing })
    );
}
