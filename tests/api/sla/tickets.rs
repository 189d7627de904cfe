//! SLA clocks on tickets: the policy a ticket gets and its due times,
//! re-evaluation, first and next responses, pausing, the scheduler's
//! warnings and breaches (exactly once, to a webhook and a socket, on two
//! nodes), and the list filters. Policies run around the clock here so due
//! times are the creation time plus the target; calendars are unit-tested.
//! Time passes with the node's fake clock (`state.clock.advance`).

use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};
use supportdesk::db::Query;
use supportdesk::sequences::sla_pass::run_pass;
use supportdesk::sla::clocks::due::due_sql;

use super::put_policies;
use crate::backend_tests;
use crate::chat::client::Client;
use crate::outbound::support::{Receiver, create_webhook, drive_until, settle};
use crate::support::{Backend, TestApp, TestCompany, plan};

backend_tests!(
    the_first_matching_policy_sets_the_due_times,
    a_priority_change_recomputes_due_times_from_creation,
    only_a_public_agent_reply_meets_the_first_response,
    each_customer_comment_starts_a_next_response,
    pending_pauses_the_clocks_and_reopening_resumes_them,
    warning_and_breach_reach_a_webhook_and_a_socket_once,
    two_nodes_announce_each_breach_once,
    sla_filters_and_the_sla_due_order,
    the_scheduler_reads_due_clocks_by_index,
    an_sla_due_time_before_1970_is_400_on_sla_due_before
);

/// Date parameters accept 1970-01-01 to 9999-12-31, as everywhere.
async fn an_sla_due_time_before_1970_is_400_on_sla_due_before(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = app
        .get("/tickets?slaDueBefore=1969-12-31T23:59:59Z", &acme.key)
        .await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.body["details"][0]["field"], "slaDueBefore", "{}", r.text);
}

/// Schedulers off: tests run the passes themselves.
pub(super) async fn quiet(backend: Backend) -> TestApp {
    TestApp::spawn_with(backend, |c| c.run_workers = false).await
}

/// HIGH and URGENT tickets: 30/240 minutes; everyone else (MEDIUM only):
/// 60/480 and a next response within 30.
pub(super) async fn two_policies(app: &TestApp, acme: &TestCompany) -> Vec<Value> {
    put_policies(
        app,
        &acme.key,
        json!([
            {"name": "Fast", "conditions": {"priorities": ["HIGH", "URGENT"]},
             "targets": {"HIGH": {"firstResponseMinutes": 30, "resolutionMinutes": 240},
                         "URGENT": {"firstResponseMinutes": 10}}},
            {"name": "Everyone else",
             "targets": {"MEDIUM": {"firstResponseMinutes": 60, "nextResponseMinutes": 30,
                                    "resolutionMinutes": 480}}},
        ]),
    )
    .await
}

pub(super) async fn ticket(app: &TestApp, acme: &TestCompany, priority: &str) -> Value {
    app.post(
        "/tickets",
        &acme.key,
        json!({"subject": "Printer on fire", "entityId": acme.entity.id, "priority": priority}),
    )
    .await
    .assert_status(201)
    .clone()
}

async fn get_ticket(app: &TestApp, acme: &TestCompany, ticket: &Value) -> Value {
    let id = ticket["id"].as_str().expect("id");
    app.get(&format!("/tickets/{id}"), &acme.key)
        .await
        .assert_status(200)
        .clone()
}

pub(super) async fn comment(
    app: &TestApp,
    acme: &TestCompany,
    ticket: &Value,
    body: Value,
) -> Value {
    let id = ticket["id"].as_str().expect("id");
    let mut body = body;
    // An agent's comment names its author: one without meets no response
    // target (docs/sla.md).
    if body["authorType"] != "customer" && body.get("authorId").is_none() {
        let agent = crate::tickets::user(app, acme.company.id, "Agent").await;
        body["authorId"] = json!(agent.id);
    }
    app.post(&format!("/tickets/{id}/comments"), &acme.key, body)
        .await
        .assert_status(201)
        .clone()
}

pub(super) async fn set_status(
    app: &TestApp,
    acme: &TestCompany,
    ticket: &Value,
    status: &str,
) -> Value {
    let id = ticket["id"].as_str().expect("id");
    app.patch(
        &format!("/tickets/{id}"),
        &acme.key,
        json!({"status": status}),
    )
    .await
    .assert_status(200)
    .clone()
}

pub(super) fn instant(value: &Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(value.as_str().expect("an instant"))
        .expect("RFC 3339")
        .with_timezone(&Utc)
}

pub(super) fn plus(value: &Value, minutes: i64) -> Value {
    json!(
        (instant(value) + Duration::minutes(minutes))
            .format("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string()
    )
}

/// The names of the company's `sla.*` events, oldest first.
async fn sla_events(app: &TestApp, acme: &TestCompany) -> Vec<String> {
    let rows = supportdesk::on_db!(&app.state.db, c => sqlx::query_as::<_, (String,)>(
        "SELECT name FROM events WHERE company_id = $1 AND name LIKE 'sla.%' \
         ORDER BY created_at, id")
        .bind(acme.company.id)
        .fetch_all(c)
        .await
        .expect("events"));
    rows.into_iter().map(|(name,)| name).collect()
}

pub(super) async fn pass(app: &TestApp) -> usize {
    let now = app.state.clock.now();
    let signer = app.state.link_signer();
    run_pass(&app.state.db, now, &signer)
        .await
        .expect("sla pass")
}

async fn the_first_matching_policy_sets_the_due_times(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let policies = two_policies(&app, &acme).await;

    let high = ticket(&app, &acme, "HIGH").await;
    let sla = &high["sla"];
    assert_eq!(sla["policyId"], policies[0]["id"]);
    assert_eq!(sla["firstResponseDueAt"], plus(&high["createdAt"], 30));
    assert_eq!(sla["resolutionDueAt"], plus(&high["createdAt"], 240));
    assert_eq!(sla["nextResponseDueAt"], Value::Null);
    assert_eq!(sla["pausedAt"], Value::Null);
    assert_eq!(sla["breaches"], json!([]));
    assert_eq!(sla["fulfilled"], json!({}));
    assert_eq!(get_ticket(&app, &acme, &high).await["sla"], *sla);

    let medium = ticket(&app, &acme, "MEDIUM").await;
    assert_eq!(medium["sla"]["policyId"], policies[1]["id"]);
    assert_eq!(
        medium["sla"]["firstResponseDueAt"],
        plus(&medium["createdAt"], 60)
    );
    // LOW meets the catch-all, which sets no LOW targets: no SLA.
    let low = ticket(&app, &acme, "LOW").await;
    assert_eq!(low["sla"], Value::Null);
}

async fn a_priority_change_recomputes_due_times_from_creation(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let policies = two_policies(&app, &acme).await;
    let t = ticket(&app, &acme, "MEDIUM").await;
    let id = t["id"].as_str().expect("id");
    let r = app
        .patch(
            &format!("/tickets/{id}"),
            &acme.key,
            json!({"priority": "HIGH"}),
        )
        .await;
    let sla = &r.assert_status(200)["sla"];
    assert_eq!(sla["policyId"], policies[0]["id"]);
    assert_eq!(sla["firstResponseDueAt"], plus(&t["createdAt"], 30));
    assert_eq!(sla["resolutionDueAt"], plus(&t["createdAt"], 240));
}

async fn only_a_public_agent_reply_meets_the_first_response(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    two_policies(&app, &acme).await;
    let t = ticket(&app, &acme, "HIGH").await;

    comment(
        &app,
        &acme,
        &t,
        json!({"body": "Looking", "isInternal": true}),
    )
    .await;
    let noted = get_ticket(&app, &acme, &t).await;
    assert_eq!(noted["sla"]["fulfilled"], json!({}));
    assert_eq!(
        noted["sla"]["firstResponseDueAt"],
        t["sla"]["firstResponseDueAt"]
    );

    let reply = comment(&app, &acme, &t, json!({"body": "On it"})).await;
    assert_eq!(reply["authorType"], "agent");
    let answered = get_ticket(&app, &acme, &t).await;
    assert_eq!(
        answered["sla"]["fulfilled"],
        json!({"firstResponse": reply["createdAt"]})
    );
    assert_eq!(answered["sla"]["firstResponseDueAt"], Value::Null);
    comment(&app, &acme, &t, json!({"body": "Still on it"})).await;
    assert_eq!(sla_events(&app, &acme).await, vec!["sla.fulfilled"]);
}

async fn each_customer_comment_starts_a_next_response(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    two_policies(&app, &acme).await;
    let t = ticket(&app, &acme, "MEDIUM").await;
    let asked = comment(
        &app,
        &acme,
        &t,
        json!({"body": "Any news?", "authorType": "customer"}),
    )
    .await;
    assert_eq!(asked["authorType"], "customer");
    let waiting = get_ticket(&app, &acme, &t).await;
    assert_eq!(
        waiting["sla"]["nextResponseDueAt"],
        plus(&asked["createdAt"], 30)
    );
    // A second customer comment before the answer keeps the first due time.
    comment(
        &app,
        &acme,
        &t,
        json!({"body": "Hello?", "authorType": "customer"}),
    )
    .await;
    let still = get_ticket(&app, &acme, &t).await;
    assert_eq!(
        still["sla"]["nextResponseDueAt"],
        plus(&asked["createdAt"], 30)
    );

    let reply = comment(&app, &acme, &t, json!({"body": "Fixed"})).await;
    let answered = get_ticket(&app, &acme, &t).await;
    assert_eq!(answered["sla"]["nextResponseDueAt"], Value::Null);
    assert_eq!(
        answered["sla"]["fulfilled"]["nextResponse"],
        reply["createdAt"]
    );

    let again = comment(
        &app,
        &acme,
        &t,
        json!({"body": "Broken again", "authorType": "customer"}),
    )
    .await;
    let waiting = get_ticket(&app, &acme, &t).await;
    assert_eq!(
        waiting["sla"]["nextResponseDueAt"],
        plus(&again["createdAt"], 30)
    );

    let r = app
        .post(
            &format!("/tickets/{}/comments", t["id"].as_str().expect("id")),
            &acme.key,
            json!({"body": "x", "authorType": "customer", "isInternal": true}),
        )
        .await;
    crate::support::assert_invalid(&r, &["authorType"]);
}

async fn pending_pauses_the_clocks_and_reopening_resumes_them(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    two_policies(&app, &acme).await;
    let t = ticket(&app, &acme, "HIGH").await;

    let pending = set_status(&app, &acme, &t, "PENDING").await;
    assert_eq!(pending["status"], "PENDING");
    assert_eq!(pending["sla"]["resolutionDueAt"], Value::Null);
    assert_eq!(pending["sla"]["firstResponseDueAt"], Value::Null);
    assert!(pending["sla"]["pausedAt"].is_string(), "{pending}");

    // Far past every due time: a paused ticket neither warns nor breaches.
    app.state.clock.advance(Duration::hours(10));
    assert_eq!(pass(&app).await, 0);
    assert_eq!(sla_events(&app, &acme).await, Vec::<String>::new());

    let reopened = set_status(&app, &acme, &t, "OPEN").await;
    assert_eq!(reopened["sla"]["pausedAt"], Value::Null);
    let due = instant(&reopened["sla"]["resolutionDueAt"]);
    assert!(due > instant(&t["sla"]["resolutionDueAt"]), "{reopened}");

    let resolved = set_status(&app, &acme, &t, "RESOLVED").await;
    assert!(
        resolved["sla"]["fulfilled"]["resolution"].is_string(),
        "{resolved}"
    );
    assert_eq!(resolved["sla"]["resolutionDueAt"], Value::Null);
    assert_eq!(sla_events(&app, &acme).await, vec!["sla.fulfilled"]);
}

async fn warning_and_breach_reach_a_webhook_and_a_socket_once(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    two_policies(&app, &acme).await;
    let receiver = Receiver::always(200).await;
    create_webhook(
        &app,
        &acme.key,
        &receiver.url("/hook"),
        &["sla.warning", "sla.breached"],
    )
    .await;
    let channel = format!("tickets:{}", acme.entity.id);
    let mut socket = Client::key(&app, &acme.key).await;
    socket.subscribe(&channel).await;
    let t = ticket(&app, &acme, "HIGH").await;
    assert_eq!(socket.next().await["type"], "ticket.created");

    // 20 minutes in: the first response (due at 30) warns 15 ahead.
    app.state.clock.advance(Duration::minutes(20));
    pass(&app).await;
    pass(&app).await;
    let warning = socket.next().await;
    assert_eq!(warning["type"], "sla.warning", "{warning}");
    assert_eq!(
        warning["data"]["data"]["slaEvent"]["metric"],
        "firstResponse"
    );
    assert_eq!(
        warning["data"]["data"]["slaEvent"]["at"],
        plus(&t["createdAt"], 15)
    );

    app.state.clock.advance(Duration::minutes(15));
    pass(&app).await;
    pass(&app).await;
    let breach = socket.next().await;
    assert_eq!(breach["type"], "sla.breached", "{breach}");
    let due = t["sla"]["firstResponseDueAt"].clone();
    assert_eq!(breach["data"]["data"]["slaEvent"]["at"], due);
    assert_eq!(
        breach["data"]["data"]["sla"]["breaches"],
        json!([{"metric": "firstResponse", "dueAt": due, "breachedAt": due}])
    );
    socket.assert_nothing_before_pong().await;

    drive_until(&app, "two sla deliveries", || receiver.count() >= 2).await;
    settle(&app).await;
    // Webhooks promise no order: compare the set.
    let mut names: Vec<String> = receiver
        .hits()
        .iter()
        .map(|hit| {
            let body: Value = serde_json::from_slice(&hit.body).expect("JSON");
            body["event"].as_str().unwrap_or_default().to_string()
        })
        .collect();
    names.sort();
    assert_eq!(names, vec!["sla.breached", "sla.warning"]);

    let id = t["id"].as_str().expect("id");
    let r = app
        .get(&format!("/tickets/{id}/activities"), &acme.key)
        .await;
    let kinds: Vec<&str> = r.assert_status(200)["data"]
        .as_array()
        .expect("activities")
        .iter()
        .filter_map(|a| a["type"].as_str())
        .filter(|kind| kind.starts_with("sla_"))
        .collect();
    assert_eq!(kinds, vec!["sla_warning", "sla_breached"]);
}

async fn two_nodes_announce_each_breach_once(backend: Backend) {
    let app = quiet(backend).await;
    let peer = app.spawn_peer().await;
    let acme = app.company().await;
    two_policies(&app, &acme).await;
    for _ in 0..10 {
        ticket(&app, &acme, "URGENT").await;
    }
    // URGENT: first response in 10 minutes, warned at once (15 > 10).
    app.state.clock.advance(Duration::minutes(11));
    peer.state.clock.advance(Duration::minutes(11));
    let (a, b) = tokio::join!(pass(&app), pass(&peer));
    let (c, d) = tokio::join!(pass(&app), pass(&peer));
    assert_eq!(a + b + c + d, 20, "passes announced {a}, {b}, {c}, {d}");
    let events = sla_events(&app, &acme).await;
    assert_eq!(events.iter().filter(|e| *e == "sla.warning").count(), 10);
    assert_eq!(events.iter().filter(|e| *e == "sla.breached").count(), 10);
}

async fn sla_filters_and_the_sla_due_order(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    two_policies(&app, &acme).await;
    let urgent = ticket(&app, &acme, "URGENT").await;
    let high = ticket(&app, &acme, "HIGH").await;
    let medium = ticket(&app, &acme, "MEDIUM").await;
    let low = ticket(&app, &acme, "LOW").await;
    app.state.clock.advance(Duration::minutes(11));
    pass(&app).await;

    let ids = |r: &Value| -> Vec<Value> {
        r["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(|t| t["id"].clone())
            .collect()
    };
    let r = app.get("/tickets?slaBreached=true", &acme.key).await;
    assert_eq!(ids(r.assert_status(200)), vec![urgent["id"].clone()]);
    assert_eq!(r.assert_status(200)["total"], 1);
    let r = app.get("/tickets?slaBreached=false", &acme.key).await;
    assert_eq!(
        ids(r.assert_status(200)),
        vec![low["id"].clone(), medium["id"].clone(), high["id"].clone()]
    );
    let before = plus(&high["createdAt"], 45);
    let before = before.as_str().expect("instant");
    let r = app
        .get(&format!("/tickets?slaDueBefore={before}"), &acme.key)
        .await;
    assert_eq!(ids(r.assert_status(200)), vec![high["id"].clone()]);
    let r = app.get("/tickets?order=sla_due", &acme.key).await;
    let body = r.assert_status(200);
    assert_eq!(
        ids(body),
        vec![
            high["id"].clone(),
            medium["id"].clone(),
            low["id"].clone(),
            urgent["id"].clone()
        ]
    );
    assert_eq!(body["nextCursor"], Value::Null);

    for bad in ["slaBreached=yes", "slaDueBefore=tomorrow", "order=oldest"] {
        let r = app.get(&format!("/tickets?{bad}"), &acme.key).await;
        r.assert_error(400, "validation_failed");
    }
}

/// Each batch of a pass is one range read of a partial index on due (or
/// warning) times, in order: no scan of clocks or tickets, no sort.
async fn the_scheduler_reads_due_clocks_by_index(backend: Backend) {
    let app = quiet(backend).await;
    for (warn, index) in [(true, "ticket_sla_warn"), (false, "ticket_sla_due")] {
        let query = Query::new(due_sql(warn))
            .bind(supportdesk::time::Timestamp::now())
            .bind(500i64);
        let off = ["enable_seqscan", "enable_bitmapscan"];
        let plan = plan(&app.state.db, query, &off).await;
        assert!(
            plan.replace('\n', " ").contains(&format!("{index} ")),
            "{index}:\n{plan}"
        );
        assert!(
            !plan.contains("TEMP B-TREE") && !plan.contains("Sort") && !plan.contains("tickets"),
            "{index}:\n{plan}"
        );
    }
}
