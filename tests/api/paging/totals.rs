//! `total` of GET /tickets: exact from the counters for every filter
//! combination after random writes; capped, and said so, for tag filters.

use rand::RngExt;
use serde_json::{Value, json};
use supportdesk::auth::{Mode, Tenant};
use supportdesk::tickets::model::TicketFilter;
use supportdesk::tickets::store;
use supportdesk::users::store::NewUser;
use uuid::Uuid;

use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    the_total_is_exact_for_every_filter_combination_after_random_writes,
    concurrent_moves_between_counters_all_succeed_and_keep_the_totals_exact,
    a_tag_filter_total_beyond_the_cap_is_a_lower_bound,
    a_tag_filter_total_within_the_cap_is_exact,
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
    let tenant = Tenant {
        company_id: acme.company.id,
        mode: Mode::Test,
    };
    let second = supportdesk::entities::store::create(db, acme.company.id, "Second", None)
        .await
        .expect("entity");
    let mut agents = Vec::new();
    for name in ["Ann", "Bob"] {
        let user = supportdesk::users::store::create(
            db,
            &tenant,
            NewUser {
                id: None,
                name: name.into(),
                email: format!("{name}-{}@example.com", Uuid::new_v4()),
                role: supportdesk::users::Role::Agent,
            },
        )
        .await
        .expect("agent");
        agents.push(user.id.to_string());
    }
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
    let tenant = Tenant {
        company_id: acme.company.id,
        mode: Mode::Test,
    };
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
