//! `total` of GET /tickets: exact from the counters for every filter
//! combination after random writes; capped, and said so, for tag filters.

use rand::RngExt;
use serde_json::{Value, json};
use sqlx::{Connection, PgConnection};
use supportdesk::auth::{Mode, Tenant};
use supportdesk::tickets::model::TicketFilter;
use supportdesk::tickets::store;
use supportdesk::users::store::NewUser;
use uuid::Uuid;

use crate::backend_tests;
use crate::postgres_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    the_total_is_exact_for_every_filter_combination_after_random_writes,
    concurrent_moves_between_counters_all_succeed_and_keep_the_totals_exact,
    totals_match_the_listed_tickets_after_concurrent_creates_moves_reassignments_and_deletes,
    deleting_a_company_with_moved_and_deleted_tickets_removes_its_tickets_and_counts,
    a_tag_filter_total_beyond_the_cap_is_a_lower_bound,
    a_tag_filter_total_within_the_cap_is_exact,
);
postgres_tests!(
    ticket_writes_of_one_combination_on_two_connections_do_not_wait_for_each_other,
    tickets_moved_and_deleted_off_the_stripe_that_counted_them_keep_exact_totals,
);

const STATUSES: [&str; 4] = ["OPEN", "IN_PROGRESS", "RESOLVED", "CLOSED"];
const PRIORITIES: [&str; 4] = ["LOW", "MEDIUM", "HIGH", "URGENT"];

fn pick<'a>(values: &[&'a str]) -> &'a str {
    values[rand::rng().random_range(0..values.len())]
}

/// `SELECT COUNT(*)` on the test database for the filters given.
async fn counted(app: &TestApp, company: Uuid, filters: &[(&str, String)]) -> i64 {
    let mut sql =
        "SELECT COUNT(*) FROM tickets WHERE company_id = $1 AND mode = 'test'".to_string();
    for (n, (name, _)) in filters.iter().enumerate() {
        let column = match *name {
            "entityId" => "entity_id",
            "status" => "status",
            "priority" => "priority",
            "teamId" => "team_id",
            _ => "assigned_to_id",
        };
        sql.push_str(&format!(" AND {column} = ${}", n + 2));
    }
    supportdesk::on_db!(&app.state.db, c => {
        let mut query = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql.clone())).bind(company);
        for (name, value) in filters {
            query = match *name {
                "entityId" | "assignedToId" | "teamId" => query.bind(Uuid::parse_str(value).expect("uuid")),
                _ => query.bind(value.clone()),
            };
        }
        query.fetch_one(c).await.expect("count")
    })
}

async fn the_total_is_exact_for_every_filter_combination_after_random_writes(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let db = &app.state.db;
    let tenant = Tenant::new(acme.company.id, Mode::Test);
    let second = supportdesk::entities::store::create(
        db,
        acme.company.id,
        "Second",
        None,
        app.state.clock.now(),
    )
    .await
    .expect("entity");
    let agents = two_agents(&app, &tenant).await;
    let entities = [acme.entity.id.to_string(), second.id.to_string()];
    let mut teams = Vec::new();
    for name in ["Billing", "Sales"] {
        let r = app
            .post("/teams", &acme.key, json!({"name": name, "memberIds": []}))
            .await;
        teams.push(r.assert_status(201)["id"].as_str().expect("id").to_string());
    }
    let any_team = || match rand::rng().random_range(0..3) {
        0 => Value::Null,
        n => json!(teams[n - 1]),
    };
    let mut tickets: Vec<String> = Vec::new();
    for round in 0..120 {
        let roll = if tickets.len() < 5 {
            0
        } else {
            rand::rng().random_range(0..10)
        };
        let r = match roll {
            0..=3 => {
                let body = json!({
                    "subject": format!("T{round}"),
                    "entityId": pick(&[&entities[0], &entities[1]]),
                    "priority": pick(&PRIORITIES),
                    "teamId": any_team(),
                });
                let r = app.post("/tickets", &acme.key, body).await;
                tickets.push(r.assert_status(201)["id"].as_str().expect("id").into());
                continue;
            }
            4..=7 => {
                let id = &tickets[rand::rng().random_range(0..tickets.len())];
                let assignee: Value = match rand::rng().random_range(0..3) {
                    0 => Value::Null,
                    n => json!(agents[n - 1]),
                };
                let body = json!({
                    "status": pick(&STATUSES),
                    "priority": pick(&PRIORITIES),
                    "assignedToId": assignee,
                    "teamId": any_team(),
                });
                app.patch(&format!("/tickets/{id}"), &acme.key, body).await
            }
            8 => {
                let id = &tickets[rand::rng().random_range(0..tickets.len())];
                let body = json!({"escalateToId": pick(&[&agents[0], &agents[1]])});
                app.post(&format!("/tickets/{id}/escalate"), &acme.key, body)
                    .await
            }
            _ => {
                let id = tickets.swap_remove(rand::rng().random_range(0..tickets.len()));
                app.delete(&format!("/tickets/{id}"), &acme.key).await
            }
        };
        assert!(r.status < 300, "round {round}: {} {}", r.status, r.body);
    }

    // Every combination of the five filters, each absent or one of its values.
    let entity_values = [None, Some(&entities[0]), Some(&entities[1])];
    let agent_values = [None, Some(&agents[0]), Some(&agents[1])];
    let team_values = [None, Some(&teams[0]), Some(&teams[1])];
    let status_values = [None].into_iter().chain(STATUSES.map(Some));
    for status in status_values {
        for priority in [None].into_iter().chain(PRIORITIES.map(Some)) {
            let cells = entity_values.iter().flat_map(|e| {
                agent_values
                    .iter()
                    .flat_map(|a| team_values.iter().map(|t| (*e, *a, *t)))
                    .collect::<Vec<_>>()
            });
            for (entity, agent, team) in cells {
                let chosen: Vec<(&str, String)> = [
                    ("entityId", entity.cloned()),
                    ("status", status.map(String::from)),
                    ("priority", priority.map(String::from)),
                    ("assignedToId", agent.cloned()),
                    ("teamId", team.cloned()),
                ]
                .into_iter()
                .filter_map(|(name, value)| value.map(|v| (name, v)))
                .collect();
                let query: Vec<String> = chosen.iter().map(|(k, v)| format!("{k}={v}")).collect();
                let r = app
                    .get(&format!("/tickets?limit=1&{}", query.join("&")), &acme.key)
                    .await;
                let want = counted(&app, acme.company.id, &chosen).await;
                assert_eq!(r.assert_status(200)["total"], want, "{query:?}");
            }
        }
    }
}

/// Eight writers move tickets between (status, priority) combinations at
/// once, in both directions: every write succeeds and each status total
/// still matches `COUNT(*)` (no increment or decrement lost to a race).
async fn concurrent_moves_between_counters_all_succeed_and_keep_the_totals_exact(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let mut tickets = Vec::new();
    for n in 0..16 {
        let body = json!({"subject": format!("T{n}"), "entityId": acme.entity.id});
        let r = app.post("/tickets", &acme.key, body).await;
        tickets.push(r.assert_status(201)["id"].as_str().expect("id").to_string());
    }
    let app = std::sync::Arc::new(app);
    let mut writers = Vec::new();
    for writer in 0..8 {
        let (app, key, tickets) = (app.clone(), acme.key.clone(), tickets.clone());
        writers.push(tokio::spawn(async move {
            for round in 0..10 {
                let id = &tickets[(writer * 3 + round) % tickets.len()];
                let body = json!({"status": pick(&STATUSES), "priority": pick(&PRIORITIES)});
                let r = app.patch(&format!("/tickets/{id}"), &key, body).await;
                assert_eq!(r.status, 200, "{}", r.body);
            }
        }));
    }
    for writer in writers {
        writer.await.expect("writer");
    }
    for status in STATUSES {
        let r = app
            .get(&format!("/tickets?status={status}"), &acme.key)
            .await;
        let want = counted(&app, acme.company.id, &[("status", status.to_string())]).await;
        assert_eq!(r.assert_status(200)["total"], want, "{status}");
    }
}

/// Two agents of `tenant`'s company, as their ids.
async fn two_agents(app: &TestApp, tenant: &Tenant) -> [String; 2] {
    let mut ids = Vec::new();
    for name in ["Ann", "Bob"] {
        let user = supportdesk::users::store::create(
            &app.state.db,
            tenant,
            NewUser {
                id: None,
                name: name.into(),
                email: format!("{name}-{}@example.com", Uuid::new_v4()),
                role: supportdesk::users::Role::Agent.into(),
            },
            app.state.clock.now(),
        )
        .await
        .expect("agent");
        ids.push(user.id.to_string());
    }
    [ids[0].clone(), ids[1].clone()]
}

/// Eight writers each create tickets, move them between statuses and
/// priorities, assign them and delete some, all at once: on Postgres these
/// writes run on many pool connections, so tickets are often counted on
/// one stripe and taken off another. Every total still equals the number of
/// tickets the list returns for the same filter.
async fn totals_match_the_listed_tickets_after_concurrent_creates_moves_reassignments_and_deletes(
    backend: Backend,
) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let tenant = Tenant::new(acme.company.id, Mode::Test);
    let agents = two_agents(&app, &tenant).await;
    let app = std::sync::Arc::new(app);
    let mut writers = Vec::new();
    for writer in 0..8 {
        let (app, key, entity) = (app.clone(), acme.key.clone(), acme.entity.id);
        let agents = agents.clone();
        writers.push(tokio::spawn(async move {
            let mut created = Vec::new();
            for round in 0..8 {
                let body = json!({
                    "subject": format!("W{writer} R{round}"),
                    "entityId": entity,
                    "priority": pick(&PRIORITIES),
                });
                let r = app.post("/tickets", &key, body).await;
                let id = r.assert_status(201)["id"].as_str().expect("id").to_string();
                let moved = json!({"status": pick(&STATUSES), "priority": pick(&PRIORITIES)});
                let r = app.patch(&format!("/tickets/{id}"), &key, moved).await;
                assert_eq!(r.status, 200, "{}", r.body);
                let assignee = json!({"assignedToId": pick(&[&agents[0], &agents[1]])});
                let r = app.patch(&format!("/tickets/{id}"), &key, assignee).await;
                assert_eq!(r.status, 200, "{}", r.body);
                created.push(id);
                if round % 3 == 2 {
                    let gone = created.swap_remove(rand::rng().random_range(0..created.len()));
                    let r = app.delete(&format!("/tickets/{gone}"), &key).await;
                    assert_eq!(r.status, 200, "{}", r.body);
                }
            }
        }));
    }
    for writer in writers {
        writer.await.expect("writer");
    }

    let filters = [String::new()]
        .into_iter()
        .chain(STATUSES.map(|s| format!("&status={s}")))
        .chain(PRIORITIES.map(|p| format!("&priority={p}")))
        .chain(agents.iter().map(|a| format!("&assignedToId={a}")));
    for filter in filters {
        // 48 tickets are left, all on one page.
        let r = app
            .get(&format!("/tickets?limit=100{filter}"), &acme.key)
            .await;
        let page = r.assert_status(200);
        let listed = page["data"].as_array().expect("data").len();
        assert_eq!(page["total"], listed, "{filter}");
    }
}

/// A new connection to a Postgres test database and the stripe of
/// `ticket_counts` its writes go to (`pg_backend_pid() % 16`).
async fn connection_and_stripe(app: &TestApp) -> (PgConnection, i32) {
    let mut connection = PgConnection::connect(&app.config.database_url)
        .await
        .expect("connect");
    let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut connection)
        .await
        .expect("backend pid");
    (connection, pid % 16)
}

/// A new connection whose writes go to another stripe than `stripe`.
async fn connection_off_stripe(app: &TestApp, stripe: i32) -> PgConnection {
    loop {
        let (connection, other) = connection_and_stripe(app).await;
        if other != stripe {
            return connection;
        }
    }
}

/// Inserts an OPEN, HIGH, unassigned ticket of `acme`'s entity (the same
/// counts row for every call), as a ticket write of the service leaves it
/// for the counts.
async fn insert_ticket(connection: &mut PgConnection, acme: &TestCompany) -> Uuid {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO tickets (id, company_id, mode, entity_id, ticket_number, subject, status, \
         priority, created_at, updated_at) \
         VALUES ($1, $2, 'test', $3, $4, 'Inserted', 'OPEN', 'HIGH', now(), now())",
    )
    .bind(id)
    .bind(acme.company.id)
    .bind(acme.entity.id)
    .bind(format!("RAW-{id}"))
    .execute(connection)
    .await
    .expect("insert a ticket");
    id
}

async fn total(app: &TestApp, acme: &TestCompany, query: &str) -> Value {
    let r = app.get(&format!("/tickets?{query}"), &acme.key).await;
    r.assert_status(200)["total"].clone()
}

/// On Postgres, one company's ticket writes in the same combination no
/// longer take turns: while one connection's transaction has created a
/// ticket and not committed, another connection creates one of the same
/// entity, status and priority, and deletes another, without waiting for
/// that commit (with a lock timeout, a wait would fail the statement).
/// (SQLite has one writer at a time: there the second write waits.)
async fn ticket_writes_of_one_combination_on_two_connections_do_not_wait_for_each_other(
    backend: Backend,
) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (mut first, stripe) = connection_and_stripe(&app).await;
    let mut second = connection_off_stripe(&app, stripe).await;
    let committed = insert_ticket(&mut second, &acme).await;

    let mut open = first.begin().await.expect("begin");
    insert_ticket(&mut open, &acme).await;
    sqlx::query("SET lock_timeout = '10s'")
        .execute(&mut second)
        .await
        .expect("lock timeout");
    insert_ticket(&mut second, &acme).await;
    sqlx::query("DELETE FROM tickets WHERE id = $1")
        .bind(committed)
        .execute(&mut second)
        .await
        .expect("a delete beside an uncommitted create");
    open.commit().await.expect("commit");

    assert_eq!(total(&app, &acme, "status=OPEN&priority=HIGH").await, 2);
}

/// On Postgres, tickets counted by one connection and then moved or
/// deleted by another leave exact totals: the other connection takes them
/// off its own stripe, where no row for them existed.
async fn tickets_moved_and_deleted_off_the_stripe_that_counted_them_keep_exact_totals(
    backend: Backend,
) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (mut counting, stripe) = connection_and_stripe(&app).await;
    let mut other = connection_off_stripe(&app, stripe).await;
    let moved = insert_ticket(&mut counting, &acme).await;
    let deleted = insert_ticket(&mut counting, &acme).await;
    insert_ticket(&mut counting, &acme).await;

    sqlx::query("UPDATE tickets SET status = 'RESOLVED' WHERE id = $1")
        .bind(moved)
        .execute(&mut other)
        .await
        .expect("move");
    sqlx::query("DELETE FROM tickets WHERE id = $1")
        .bind(deleted)
        .execute(&mut other)
        .await
        .expect("delete");

    assert_eq!(total(&app, &acme, "status=OPEN").await, 1);
    assert_eq!(total(&app, &acme, "status=RESOLVED").await, 1);
    assert_eq!(total(&app, &acme, "").await, 2);
}

/// A company deleted with its tickets (no endpoint does it; an operator
/// might): the cascade deletes the tickets and their counts, and the
/// counts' triggers do not stop it by counting tickets of a company that
/// is going away. Its tickets were moved and deleted on several
/// connections first, so on Postgres its counts span stripes.
async fn deleting_a_company_with_moved_and_deleted_tickets_removes_its_tickets_and_counts(
    backend: Backend,
) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let mut tickets = Vec::new();
    for n in 0..6 {
        let body = json!({"subject": format!("T{n}"), "entityId": acme.entity.id});
        let r = app.post("/tickets", &acme.key, body).await;
        tickets.push(r.assert_status(201)["id"].as_str().expect("id").to_string());
    }
    let paths: Vec<String> = tickets.iter().map(|id| format!("/tickets/{id}")).collect();
    let moves = paths
        .iter()
        .map(|path| app.patch(path, &acme.key, json!({"status": "IN_PROGRESS"})));
    for r in futures::future::join_all(moves).await {
        r.assert_status(200);
    }
    app.delete(&format!("/tickets/{}", tickets[0]), &acme.key)
        .await
        .assert_status(200);

    let company = acme.company.id;
    let left = supportdesk::on_db!(&app.state.db, c => {
        // The audit sealer may be chaining the deletes' entries meanwhile:
        // Postgres then ends one of the two as a deadlock, and an operator
        // runs the statement again.
        let mut tries = 0;
        loop {
            tries += 1;
            match sqlx::query("DELETE FROM companies WHERE id = $1")
                .bind(company)
                .execute(c)
                .await
            {
                Ok(_) => break,
                Err(sqlx::Error::Database(error))
                    if error.code().as_deref() == Some("40P01") && tries < 5 => {}
                Err(error) => panic!("delete the company: {error}"),
            }
        }
        let tickets: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM tickets WHERE company_id = $1")
            .bind(company)
            .fetch_one(c)
            .await
            .expect("tickets");
        let counts: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM ticket_counts WHERE company_id = $1")
                .bind(company)
                .fetch_one(c)
                .await
                .expect("counts");
        (tickets, counts)
    });
    assert_eq!(left, (0, 0));
}

/// A company with `n` tickets tagged `vip`.
async fn vip_tickets(backend: Backend, n: usize) -> (TestApp, Tenant) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    for i in 0..n {
        let body =
            json!({"subject": format!("VIP {i}"), "entityId": acme.entity.id, "tags": ["vip"]});
        app.post("/tickets", &acme.key, body)
            .await
            .assert_status(201);
    }
    let tenant = Tenant::new(acme.company.id, Mode::Test);
    (app, tenant)
}

fn vip_filter() -> TicketFilter {
    let mut filter = TicketFilter::default();
    filter.tags.all = vec!["vip".into()];
    filter
}

async fn a_tag_filter_total_beyond_the_cap_is_a_lower_bound(backend: Backend) {
    let (app, tenant) = vip_tickets(backend, 7).await;
    let total = store::count(&app.state.db, &tenant, &vip_filter(), 5)
        .await
        .expect("count");
    assert_eq!(
        total,
        supportdesk::paging::Total {
            value: 5,
            is_lower_bound: true
        }
    );
}

async fn a_tag_filter_total_within_the_cap_is_exact(backend: Backend) {
    let (app, tenant) = vip_tickets(backend, 5).await;
    let total = store::count(&app.state.db, &tenant, &vip_filter(), 5)
        .await
        .expect("count");
    assert_eq!(total, supportdesk::paging::Total::exact(5));
}
