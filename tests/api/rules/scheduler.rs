//! The escalation rules scheduler: which tickets a rule fires for, never
//! twice, disabled rules, tenancy, the same escalation as the API, the
//! worker loop, and two nodes on one database.

use std::time::Duration;

use serde_json::{Value, json};
use supportdesk::auth::{Mode, ScopeSet};

use super::{
    backdate, escalated_activities, escalated_event_count, escalated_events, firing_count,
    get_ticket, put_rules, run_pass, ticket, user,
};
use crate::backend_tests;
use crate::support::{Backend, TestApp, eventually_within};

backend_tests!(
    a_rule_fires_for_matching_tickets_only,
    a_rule_never_fires_twice_for_a_ticket,
    automatic_escalation_matches_a_manual_one,
    rules_act_only_on_their_tenant,
    the_scheduler_runs_every_interval,
    two_nodes_fire_a_rule_once,
);

/// Schedulers off: tests run the passes themselves.
async fn quiet(backend: Backend) -> TestApp {
    TestApp::spawn_with(backend, |c| c.run_workers = false).await
}

async fn a_rule_fires_for_matching_tickets_only(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let ann = user(&app, acme.company.id, "Ann").await;
    let bob = user(&app, acme.company.id, "Bob").await;

    let matching = ticket(&app, &acme, json!({"subject": "Down", "priority": "HIGH"})).await;
    let low = ticket(&app, &acme, json!({"subject": "Low", "priority": "LOW"})).await;
    let assigned = ticket(&app, &acme, json!({"subject": "Taken", "priority": "HIGH"})).await;
    app.patch(
        &format!("/tickets/{assigned}"),
        key,
        json!({"assignedToId": ann.id}),
    )
    .await
    .assert_status(200);
    let resolved = ticket(
        &app,
        &acme,
        json!({"subject": "Done", "priority": "URGENT"}),
    )
    .await;
    app.patch(
        &format!("/tickets/{resolved}"),
        key,
        json!({"status": "RESOLVED"}),
    )
    .await
    .assert_status(200);
    for id in [&matching, &low, &assigned, &resolved] {
        backdate(&app, id, 120).await;
    }
    let fresh = ticket(&app, &acme, json!({"subject": "New", "priority": "HIGH"})).await;

    put_rules(
        &app,
        key,
        json!([
            {"name": "Unassigned high for an hour",
             "conditions": {"priorities": ["HIGH", "URGENT"], "unassigned": true,
                            "minutesSinceCreated": 60},
             "action": {"escalateToId": bob.id, "reason": "SLA"}},
            {"name": "Disabled catch-all", "enabled": false,
             "conditions": {"minutesSinceCreated": 0,
                            "statuses": ["OPEN", "IN_PROGRESS", "RESOLVED", "CLOSED"]},
             "action": {"escalateToId": ann.id}},
        ]),
    )
    .await;

    assert_eq!(run_pass(&app).await, 1);
    let t = get_ticket(&app, key, &matching).await;
    assert_eq!(
        (&t["status"], &t["priority"], &t["assignedToId"]),
        (&json!("IN_PROGRESS"), &json!("URGENT"), &json!(bob.id))
    );
    // Not the others: wrong priority, assigned, resolved (a rule without
    // statuses acts on OPEN and IN_PROGRESS only), too recent; and the
    // disabled rule, which would match them all, fired for none.
    for id in [&low, &assigned, &resolved, &fresh] {
        assert!(escalated_events(&app, id).await.is_empty(), "{id}");
    }
    assert_eq!(get_ticket(&app, key, &resolved).await["status"], "RESOLVED");
    assert_eq!(escalated_event_count(&app).await, 1);

    // Time passes for the fresh ticket: the next pass takes it, and only it.
    backdate(&app, &fresh, 61).await;
    assert_eq!(run_pass(&app).await, 1);
    assert_eq!(escalated_events(&app, &fresh).await.len(), 1);
    assert_eq!(run_pass(&app).await, 0);
    assert_eq!(escalated_event_count(&app).await, 2);
    assert_eq!(firing_count(&app).await, 2);
}

async fn a_rule_never_fires_twice_for_a_ticket(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let bob = user(&app, acme.company.id, "Bob").await;
    let id = ticket(&app, &acme, json!({"subject": "Loop"})).await;
    // Still true after the escalation (IN_PROGRESS is one of the default
    // statuses): only the record of the firing stops a second one.
    let saved = put_rules(
        &app,
        key,
        json!([{"name": "Any open ticket", "conditions": {"minutesSinceCreated": 0},
                "action": {"escalateToId": bob.id}}]),
    )
    .await;
    assert_eq!(run_pass(&app).await, 1);
    assert_eq!(run_pass(&app).await, 0);
    // Reopened and reassigned: it matches again, but this rule has fired.
    app.patch(
        &format!("/tickets/{id}"),
        key,
        json!({"status": "OPEN", "assignedToId": null}),
    )
    .await
    .assert_status(200);
    assert_eq!(run_pass(&app).await, 0);
    // Editing the rule keeps its id and so its history...
    let mut edited = saved[0].clone();
    edited["name"] = json!("Renamed");
    put_rules(&app, key, json!([edited])).await;
    assert_eq!(run_pass(&app).await, 0);
    assert_eq!(escalated_events(&app, &id).await.len(), 1);
    // ...while a new rule (no id) is a new history.
    put_rules(
        &app,
        key,
        json!([{"name": "Again", "conditions": {"minutesSinceCreated": 0},
                "action": {"escalateToId": bob.id}}]),
    )
    .await;
    assert_eq!(run_pass(&app).await, 1);
    assert_eq!(escalated_events(&app, &id).await.len(), 2);
}

async fn automatic_escalation_matches_a_manual_one(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let ann = user(&app, acme.company.id, "Ann").await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let mut ids = Vec::new();
    for subject in ["Manual", "Automatic"] {
        let id = ticket(&app, &acme, json!({"subject": subject, "priority": "LOW"})).await;
        app.patch(
            &format!("/tickets/{id}"),
            key,
            json!({"assignedToId": ann.id}),
        )
        .await
        .assert_status(200);
        ids.push(id);
    }
    let (manual, automatic) = (&ids[0], &ids[1]);
    app.post(
        &format!("/tickets/{manual}/escalate"),
        key,
        json!({"escalateToId": bob.id, "reason": "No answer"}),
    )
    .await
    .assert_status(200);
    let rule = put_rules(
        &app,
        key,
        json!([{"name": "Ann's low tickets", "conditions": {"priorities": ["LOW"],
                "unassigned": false}, "action": {"escalateToId": bob.id, "reason": "No answer"}}]),
    )
    .await;
    let rule_id = rule[0]["id"].clone();
    assert_eq!(run_pass(&app).await, 1);

    // The tickets: same state, apart from what identifies each ticket.
    let strip = |mut t: Value, drop: &[&str]| {
        for field in drop {
            t.as_object_mut().expect("object").remove(*field);
        }
        t
    };
    let own = ["id", "ticketNumber", "subject", "createdAt", "updatedAt"];
    let by_hand = get_ticket(&app, key, manual).await;
    let by_rule = get_ticket(&app, key, automatic).await;
    assert_eq!(by_rule["status"], "IN_PROGRESS");
    assert_eq!(by_rule["priority"], "URGENT");
    assert_eq!(by_rule["assignedTo"]["name"], "Bob");
    assert_eq!(strip(by_rule.clone(), &own), strip(by_hand.clone(), &own));

    // The events (what webhooks deliver): the same but for automatic/ruleId.
    let hand_events = escalated_events(&app, manual).await;
    let rule_events = escalated_events(&app, automatic).await;
    assert_eq!((hand_events.len(), rule_events.len()), (1, 1));
    assert_eq!(
        rule_events[0]["escalation"],
        json!({"reason": "No answer", "escalatedToId": bob.id,
               "previousAssigneeId": ann.id, "automatic": true, "ruleId": rule_id})
    );
    let mut expected = hand_events[0].clone();
    expected["escalation"]["automatic"] = json!(true);
    expected["escalation"]["ruleId"] = rule_id.clone();
    assert_eq!(strip(rule_events[0].clone(), &own), strip(expected, &own));
    assert_eq!(
        strip(rule_events[0].clone(), &["escalation"]),
        by_rule,
        "the event carries the ticket as the API shows it"
    );

    // The timeline entries likewise.
    let hand_entries = escalated_activities(&app, key, manual).await;
    let rule_entries = escalated_activities(&app, key, automatic).await;
    assert_eq!((hand_entries.len(), rule_entries.len()), (1, 1));
    let mut expected = hand_entries[0]["details"].clone();
    expected["automatic"] = json!(true);
    expected["ruleId"] = rule_id;
    assert_eq!(rule_entries[0]["details"], expected);
    assert_eq!(
        rule_entries[0]["details"]["changes"],
        json!({"status": {"from": "OPEN", "to": "IN_PROGRESS"},
               "priority": {"from": "LOW", "to": "URGENT"},
               "assignedToId": {"from": ann.id, "to": bob.id}})
    );

    // Reports count one of each.
    let r = app.get("/reports/tickets", key).await;
    assert_eq!(
        r.assert_status(200)["escalations"],
        json!({"total": 2, "manual": 1, "automatic": 1})
    );
}

async fn rules_act_only_on_their_tenant(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let otto = user(&app, other.company.id, "Otto").await;
    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    let test_ticket = ticket(&app, &acme, json!({"subject": "Test mode"})).await;
    let other_ticket = ticket(&app, &other, json!({"subject": "Other company"})).await;
    let live_ticket = app
        .post(
            "/tickets",
            &live,
            json!({"subject": "Live mode", "entityId": acme.entity.id}),
        )
        .await
        .assert_status(201)["id"]
        .as_str()
        .expect("id")
        .to_string();

    // A catch-all rule in acme's LIVE mode escalates acme's LIVE ticket only.
    let catch_all = json!({"minutesSinceCreated": 0});
    put_rules(
        &app,
        &live,
        json!([{"name": "Live", "conditions": catch_all, "action": {"escalateToId": bob.id}}]),
    )
    .await;
    assert_eq!(run_pass(&app).await, 1);
    assert_eq!(
        get_ticket(&app, &live, &live_ticket).await["status"],
        "IN_PROGRESS"
    );
    assert_eq!(
        get_ticket(&app, &acme.key, &test_ticket).await["status"],
        "OPEN"
    );
    assert_eq!(
        get_ticket(&app, &other.key, &other_ticket).await["status"],
        "OPEN"
    );

    // The other company's rule reaches its own ticket only.
    put_rules(
        &app,
        &other.key,
        json!([{"name": "Other", "conditions": catch_all, "action": {"escalateToId": otto.id}}]),
    )
    .await;
    assert_eq!(run_pass(&app).await, 1);
    assert_eq!(
        get_ticket(&app, &other.key, &other_ticket).await["assignedToId"],
        json!(otto.id)
    );
    assert_eq!(
        get_ticket(&app, &acme.key, &test_ticket).await["status"],
        "OPEN"
    );

    // A suspended company's rules rest.
    put_rules(
        &app,
        &acme.key,
        json!([{"name": "Test", "conditions": catch_all, "action": {"escalateToId": bob.id}}]),
    )
    .await;
    supportdesk::companies::store::set_suspended(
        &app.state.db,
        acme.company.id,
        true,
        app.state.clock.now(),
    )
    .await
    .expect("suspended");
    assert_eq!(run_pass(&app).await, 0);
    supportdesk::companies::store::set_suspended(
        &app.state.db,
        acme.company.id,
        false,
        app.state.clock.now(),
    )
    .await
    .expect("reactivated");
    assert_eq!(run_pass(&app).await, 1);
    assert_eq!(
        get_ticket(&app, &acme.key, &test_ticket).await["assignedToId"],
        json!(bob.id)
    );
}

/// How long a test waits for the background scheduler: many intervals,
/// as its passes share a loaded machine with the other tests.
const SCHEDULED_WITHIN: Duration = Duration::from_secs(30);

async fn the_scheduler_runs_every_interval(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.rules_interval = Duration::from_millis(100)).await;
    let acme = app.company().await;
    let bob = user(&app, acme.company.id, "Bob").await;
    put_rules(
        &app,
        &acme.key,
        json!([{"name": "Unassigned", "conditions": {"unassigned": true},
                "action": {"escalateToId": bob.id}}]),
    )
    .await;
    // Tickets created after the first passes are picked up by later ones.
    for round in 0..2 {
        let id = ticket(&app, &acme, json!({"subject": format!("Round {round}")})).await;
        eventually_within(
            "the scheduler escalates the ticket",
            SCHEDULED_WITHIN,
            || async { get_ticket(&app, &acme.key, &id).await["assignedToId"] == json!(bob.id) },
        )
        .await;
    }
    assert_eq!(escalated_event_count(&app).await, 2);
}

async fn two_nodes_fire_a_rule_once(backend: Backend) {
    // Both nodes run the scheduler, often.
    let app = TestApp::spawn_with(backend, |c| c.rules_interval = Duration::from_millis(50)).await;
    let peer = app.spawn_peer().await;
    let acme = app.company().await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let mut ids = Vec::new();
    for i in 0..6 {
        ids.push(ticket(&app, &acme, json!({"subject": format!("Ticket {i}")})).await);
    }
    put_rules(
        &app,
        &acme.key,
        json!([{"name": "Unassigned", "conditions": {"unassigned": true},
                "action": {"escalateToId": bob.id}}]),
    )
    .await;
    eventually_within("every ticket is escalated", SCHEDULED_WITHIN, || async {
        escalated_event_count(&app).await >= 6
    })
    .await;
    // More passes on both nodes at once find nothing left to do.
    let (a, b) = tokio::join!(run_pass(&app), run_pass(&peer));
    assert_eq!((a, b), (0, 0));
    assert_eq!(escalated_event_count(&app).await, 6);
    assert_eq!(firing_count(&app).await, 6);
    for id in &ids {
        assert_eq!(escalated_activities(&app, &acme.key, id).await.len(), 1);
    }
    peer.stop().await;
    app.stop().await;

    // Passes driven by hand on two nodes at once: each ticket once.
    let app = quiet(backend).await;
    let peer = app.spawn_peer().await;
    let acme = app.company().await;
    let bob = user(&app, acme.company.id, "Bob").await;
    for i in 0..20 {
        ticket(&app, &acme, json!({"subject": format!("Ticket {i}")})).await;
    }
    put_rules(
        &app,
        &acme.key,
        json!([{"name": "Unassigned", "conditions": {"unassigned": true},
                "action": {"escalateToId": bob.id}}]),
    )
    .await;
    let (a, b) = tokio::join!(run_pass(&app), run_pass(&peer));
    let (c, d) = tokio::join!(run_pass(&app), run_pass(&peer));
    assert_eq!(a + b + c + d, 20, "passes fired {a}, {b}, {c}, {d}");
    if backend == Backend::Postgres {
        // The advisory lock: one pass at a time, so the one that did not
        // get it (or came after) found nothing to do.
        let mut side_by_side = [a, b];
        side_by_side.sort_unstable();
        assert_eq!(
            side_by_side,
            [0, 20],
            "passes fired {a} and {b} side by side"
        );
    }
    assert_eq!(escalated_event_count(&app).await, 20);
    assert_eq!(firing_count(&app).await, 20);
}
