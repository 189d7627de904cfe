//! SLA clocks beyond the ticket's own comments: the team's channels hear
//! its tickets' SLA events, an agent's chat message meets the first
//! response of a ticket made from the chat, ticket writes read the node's
//! (fake) clock, and the scheduler's due query over 100,000 running clocks
//! on Postgres is one range read of a partial index per batch.

use chrono::{Duration, Utc};
use serde_json::{Value, json};
use supportdesk::db::{Db, Query};
use supportdesk::sla::clocks::due::{BATCH, due_sql};

use super::tickets::{pass, quiet, ticket, two_policies};
use crate::backend_tests;
use crate::chat::client::Client;
use crate::chat::{agent, id_of, new_session};
use crate::support::{Backend, TestApp, TestCompany, plan};

backend_tests!(
    a_breach_reaches_the_channels_of_the_tickets_team,
    an_agent_chat_message_meets_the_first_response_of_a_ticket_from_the_chat,
    an_agent_answer_before_the_ticket_meets_its_first_response_at_creation,
    ticket_writes_read_the_nodes_clock,
    the_due_query_over_100000_running_clocks_is_one_index_range_read,
);

/// A HIGH ticket made from a new chat session (first response in 30).
async fn ticket_from_chat(app: &TestApp, acme: &TestCompany, session: &Value) -> Value {
    app.post(
        "/tickets",
        &acme.key,
        json!({"subject": "From the chat", "entityId": acme.entity.id, "priority": "HIGH",
               "chatSessionId": session["id"]}),
    )
    .await
    .assert_status(201)
    .clone()
}

async fn send(app: &TestApp, acme: &TestCompany, session: &Value, body: Value) -> Value {
    let path = format!("/chat/sessions/{}/messages", id_of(session));
    app.post(&path, &acme.key, body)
        .await
        .assert_status(201)
        .clone()
}

async fn sla_of(app: &TestApp, acme: &TestCompany, ticket: &Value) -> Value {
    let path = format!("/tickets/{}", id_of(ticket));
    app.get(&path, &acme.key).await.assert_status(200)["sla"].clone()
}

async fn a_breach_reaches_the_channels_of_the_tickets_team(backend: Backend) {
    // With its workers: the bus carries the frames to the sockets.
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    two_policies(&app, &acme).await;
    let elsewhere = supportdesk::entities::store::create(
        &app.state.db,
        acme.company.id,
        "EU",
        None,
        app.state.clock.now(),
    )
    .await
    .expect("entity")
    .id;
    let team = app
        .post(
            "/teams",
            &acme.key,
            json!({"name": "EU desk", "memberIds": [], "entityIds": [elsewhere]}),
        )
        .await
        .assert_status(201)["id"]
        .clone();
    let created = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": "Late", "entityId": acme.entity.id, "priority": "URGENT",
                   "teamId": team}),
        )
        .await
        .assert_status(201)
        .clone();
    let mut team_console = Client::key(&app, &acme.key).await;
    team_console
        .subscribe(&format!("tickets:{elsewhere}"))
        .await;

    app.state.clock.advance(Duration::minutes(11));
    pass(&app).await;

    let frame = team_console.next_of("sla.breached").await;
    assert_eq!(frame["channel"], format!("tickets:{elsewhere}"), "{frame}");
    assert_eq!(frame["data"]["data"]["id"], created["id"], "{frame}");
}

async fn an_agent_chat_message_meets_the_first_response_of_a_ticket_from_the_chat(
    backend: Backend,
) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    two_policies(&app, &acme).await;
    let ann = agent(&app, &acme, "Ann").await;
    let session = new_session(&app, &acme, json!({})).await;
    let made = ticket_from_chat(&app, &acme, &session).await;
    assert!(made["sla"]["firstResponseDueAt"].is_string(), "{made}");

    let answer = send(
        &app,
        &acme,
        &session,
        json!({"body": "Looking into it", "senderType": "agent", "senderId": ann}),
    )
    .await;

    let sla = sla_of(&app, &acme, &made).await;
    assert_eq!(
        sla["fulfilled"],
        json!({"firstResponse": answer["createdAt"]})
    );
    assert_eq!(sla["firstResponseDueAt"], Value::Null);
}

async fn an_agent_answer_before_the_ticket_meets_its_first_response_at_creation(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    two_policies(&app, &acme).await;
    let ann = agent(&app, &acme, "Ann").await;
    let session = new_session(&app, &acme, json!({})).await;
    send(
        &app,
        &acme,
        &session,
        json!({"body": "Hi, Ann here", "senderType": "agent", "senderId": ann}),
    )
    .await;

    let made = ticket_from_chat(&app, &acme, &session).await;

    assert_eq!(
        made["sla"]["fulfilled"],
        json!({"firstResponse": made["createdAt"]})
    );
}

async fn ticket_writes_read_the_nodes_clock(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    two_policies(&app, &acme).await;
    app.state.clock.advance(Duration::hours(3));

    let created = ticket(&app, &acme, "HIGH").await;

    let at = chrono::DateTime::parse_from_rfc3339(created["createdAt"].as_str().expect("at"))
        .expect("RFC 3339")
        .with_timezone(&Utc);
    assert!(at - Utc::now() > Duration::minutes(170), "{created}");
}

/// 100,000 open tickets with policies, two running clocks each, 1% of them
/// due: each batch of the pass is a range read of the partial index on due
/// (or warning) times, cut by the LIMIT: no scan, no sort, no tickets. The
/// table is analysed, so the planner chooses on real statistics (no
/// `enable_seqscan = off`). SQLite's plan is asserted with the other
/// scheduler tests.
async fn the_due_query_over_100000_running_clocks_is_one_index_range_read(backend: Backend) {
    let app = quiet(backend).await;
    let Db::Postgres(pool) = &app.state.db else {
        return;
    };
    let pool = pool.sqlx();
    let acme = app.company().await;
    let now = app.state.clock.now();
    // The seed skips the tables' triggers (session_replication_role): the
    // tickets' search rows and counts play no part in the plan under test,
    // and 100,000 upserts of one count row in one transaction took minutes.
    let mut seed = pool.begin().await.expect("seed transaction");
    sqlx::query("SET LOCAL session_replication_role = replica")
        .execute(&mut *seed)
        .await
        .expect("seed without triggers");
    // A seed of this size may outlast the service's statement timeout on a
    // loaded machine; the limit is the service's, not the seed's.
    sqlx::query("SET LOCAL statement_timeout = 0")
        .execute(&mut *seed)
        .await
        .expect("seed without a statement timeout");
    sqlx::query(
        "INSERT INTO tickets (id, company_id, mode, entity_id, ticket_number, subject, status, \
         priority, created_at, updated_at) \
         SELECT gen_random_uuid(), $1, 'test', $2, 'TKT-' || n, 'Seeded', 'OPEN', 'HIGH', $3, $3 \
         FROM generate_series(1, 100000) AS n",
    )
    .bind(acme.company.id)
    .bind(acme.entity.id)
    .bind(now)
    .execute(&mut *seed)
    .await
    .expect("tickets");
    // Due from 100 minutes ago to about a week ahead, one minute apart.
    sqlx::query(
        "INSERT INTO ticket_sla (ticket_id, metric, company_id, mode, state, target_minutes, \
         running_since, due_at, warn_at) \
         SELECT t.id, m.metric, t.company_id, t.mode, 'running', 60, t.created_at, \
         $2::timestamptz + (((row_number() OVER ()) % 10000) - 100) * interval '1 minute', \
         $2::timestamptz + (((row_number() OVER ()) % 10000) - 115) * interval '1 minute' \
         FROM tickets t CROSS JOIN (VALUES ('first_response'), ('resolution')) AS m (metric) \
         WHERE t.company_id = $1",
    )
    .bind(acme.company.id)
    .bind(now)
    .execute(&mut *seed)
    .await
    .expect("clocks");
    seed.commit().await.expect("seed committed");
    sqlx::query("ANALYZE ticket_sla")
        .execute(pool)
        .await
        .expect("analyze");

    for (warn, index) in [(true, "ticket_sla_warn"), (false, "ticket_sla_due")] {
        // The planner's own choice (nothing turned off), on real statistics.
        let query = Query::new(due_sql(warn)).bind(now).bind(BATCH);
        let plan = plan(&app.state.db, query, &[]).await;
        let top: Vec<&str> = plan.lines().take(2).map(str::trim_start).collect();
        assert!(top[0].starts_with("Limit "), "{index}:\n{plan}");
        assert!(
            top[1].starts_with(&format!("->  Index Scan using {index} on ticket_sla ")),
            "{index}:\n{plan}"
        );
        assert!(
            !plan.contains("Sort") && !plan.contains("Seq Scan") && !plan.contains("tickets"),
            "{index}:\n{plan}"
        );
    }
}
