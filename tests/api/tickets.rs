//! Tickets: create, list, update, escalate, delete, comments, the timeline,
//! ticket numbers under concurrency, events, visitor emails, tenancy and
//! validation.

use serde_json::{Value, json};
use supportdesk::auth::{Mode, Scope, ScopeSet, Tenant};
use supportdesk::db::Db;
use supportdesk::tickets::model::TicketFilter;
use supportdesk::tickets::{Escalation, store};
use supportdesk::users::store::{NewUser, User};
use uuid::Uuid;

use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    creates_with_defaults_and_reads_back,
    lists_with_filters_limits_and_stable_paging,
    every_list_filter_combination_reads_its_index_in_order,
    patches_each_field,
    escalates_to_another_agent,
    concurrent_creates_get_consecutive_numbers,
    events_and_timeline_follow_each_operation,
    visitor_emails_on_creation_and_resolution_only,
    comments_are_added_and_listed,
    deletes_tickets,
    foreign_unknown_and_malformed_ids_are_404,
    invalid_input_is_400_with_field_details,
);

fn test_tenant(company_id: Uuid) -> Tenant {
    Tenant {
        company_id,
        mode: Mode::Test,
    }
}

async fn user(app: &TestApp, company_id: Uuid, name: &str) -> User {
    supportdesk::users::store::create(
        &app.state.db,
        &test_tenant(company_id),
        NewUser {
            id: None,
            name: name.into(),
            email: format!("{}-{}@example.com", name.to_lowercase(), Uuid::new_v4()),
            role: "AGENT".into(),
        },
    )
    .await
    .expect("user created")
}

async fn ticket(app: &TestApp, acme: &TestCompany, body: Value) -> Value {
    let mut body = body;
    body["entityId"] = json!(acme.entity.id);
    app.post("/tickets", &acme.key, body)
        .await
        .assert_status(201)
        .clone()
}

fn id_of(value: &Value) -> String {
    value["id"].as_str().expect("id").to_string()
}

/// The company's ticket and comment events (not `user.created`), oldest first.
async fn events(app: &TestApp, company_id: Uuid) -> Vec<(String, Value)> {
    let rows = supportdesk::on_db!(&app.state.db, c => sqlx::query_as::<_, (String, sqlx::types::Json<Value>)>(
        "SELECT name, data FROM events WHERE company_id = $1 AND name <> 'user.created' \
         ORDER BY created_at, id")
        .bind(company_id)
        .fetch_all(c)
        .await
        .expect("events read"));
    rows.into_iter()
        .map(|(name, data)| (name, data.0))
        .collect()
}

fn names(events: &[(String, Value)]) -> Vec<&str> {
    events.iter().map(|(name, _)| name.as_str()).collect()
}

/// Payloads of the company's queued emails, oldest first.
async fn emails(app: &TestApp, company_id: Uuid) -> Vec<Value> {
    let rows = supportdesk::on_db!(&app.state.db, c => sqlx::query_as::<_, (sqlx::types::Json<Value>,)>(
        "SELECT payload FROM outbox_jobs WHERE kind = 'email' AND company_id = $1 \
         ORDER BY created_at, id")
        .bind(company_id)
        .fetch_all(c)
        .await
        .expect("outbox read"));
    rows.into_iter().map(|(payload,)| payload.0).collect()
}

async fn activity_types(app: &TestApp, key: &str, id: &str) -> Vec<String> {
    let r = app.get(&format!("/tickets/{id}/activities"), key).await;
    r.assert_status(200)["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|a| a["type"].as_str().expect("type").to_string())
        .collect()
}

fn is_timestamp(value: &Value) -> bool {
    let text = value.as_str().unwrap_or_default();
    text.len() == 24 && text.ends_with('Z') && text.as_bytes()[19] == b'.'
}

async fn creates_with_defaults_and_reads_back(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;

    let r = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": "  Cannot log in  ", "entityId": acme.entity.id}),
        )
        .await;
    let created = r.assert_status(201).clone();
    assert_eq!(created["ticketNumber"], "TKT-000001");
    assert_eq!(created["subject"], "Cannot log in", "trimmed");
    assert_eq!(created["status"], "OPEN");
    assert_eq!(created["priority"], "MEDIUM");
    assert_eq!(created["entityId"], json!(acme.entity.id));
    assert_eq!(created["description"], Value::Null);
    assert_eq!(created["visitorEmail"], Value::Null);
    assert_eq!(created["assignedTo"], Value::Null);
    assert!(is_timestamp(&created["createdAt"]), "{created}");
    assert!(is_timestamp(&created["updatedAt"]), "{created}");
    Uuid::parse_str(created["id"].as_str().expect("id")).expect("uuid id");

    let full = ticket(
        &app,
        &acme,
        json!({"subject": "Refund", "description": "Charged twice", "priority": "HIGH",
               "visitorEmail": "ann@example.com"}),
    )
    .await;
    assert_eq!(full["ticketNumber"], "TKT-000002");
    assert_eq!(full["priority"], "HIGH");
    assert_eq!(full["status"], "OPEN");
    assert_eq!(full["description"], "Charged twice");
    assert_eq!(full["visitorEmail"], "ann@example.com");

    let read = app
        .get(&format!("/tickets/{}", id_of(&full)), &acme.key)
        .await;
    assert_eq!(read.assert_status(200), &full);

    // The LIVE mode of the same company has its own sequence.
    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    let r = app
        .post(
            "/tickets",
            &live,
            json!({"subject": "Live one", "entityId": acme.entity.id}),
        )
        .await;
    assert_eq!(r.assert_status(201)["ticketNumber"], "TKT-000001");
}

/// One ticket of the list scenario, as the test expects it.
struct Expected {
    id: String,
    entity: Uuid,
    status: &'static str,
    priority: &'static str,
    assignee: Option<Uuid>,
}

async fn lists_with_filters_limits_and_stable_paging(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other_entity =
        supportdesk::entities::store::create(&app.state.db, acme.company.id, "Second", None)
            .await
            .expect("entity");
    let ann = user(&app, acme.company.id, "Ann").await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let priorities = ["LOW", "MEDIUM", "HIGH", "URGENT"];

    let mut all = Vec::new();
    for i in 0..25usize {
        let entity = if i % 2 == 0 {
            acme.entity.id
        } else {
            other_entity.id
        };
        let r = app
            .post(
                "/tickets",
                &acme.key,
                json!({"subject": format!("Ticket {i}"), "entityId": entity,
                       "priority": priorities[i % 4]}),
            )
            .await;
        let id = id_of(r.assert_status(201));
        let status = if i % 3 == 0 { "RESOLVED" } else { "OPEN" };
        let assignee = match i % 5 {
            0 => Some(ann.id),
            1 => Some(bob.id),
            _ => None,
        };
        if status != "OPEN" || assignee.is_some() {
            let mut patch = json!({"status": status});
            if let Some(user) = assignee {
                patch["assignedToId"] = json!(user);
            }
            app.patch(&format!("/tickets/{id}"), &acme.key, patch)
                .await
                .assert_status(200);
        }
        all.push(Expected {
            id,
            entity,
            status,
            priority: priorities[i % 4],
            assignee,
        });
    }
    // Newest first.
    all.reverse();

    // Default page: 20 of 25, with the list item shape.
    let r = app.get("/tickets", &acme.key).await;
    let body = r.assert_status(200);
    assert_eq!(body["total"], 25);
    assert_eq!(body["limit"], 20);
    assert_eq!(body["offset"], 0);
    let data = body["data"].as_array().expect("data");
    assert_eq!(data.len(), 20);
    let ids: Vec<&str> = data.iter().map(|t| t["id"].as_str().expect("id")).collect();
    let expected: Vec<&str> = all.iter().take(20).map(|t| t.id.as_str()).collect();
    assert_eq!(ids, expected, "newest first");
    for item in data {
        for field in [
            "id",
            "ticketNumber",
            "subject",
            "status",
            "priority",
            "createdAt",
        ] {
            assert!(item[field].is_string(), "{field} in {item}");
        }
    }
    let newest_assigned = data
        .iter()
        .find(|t| !t["assignedTo"].is_null())
        .expect("an assigned ticket");
    let who = &newest_assigned["assignedTo"];
    assert!(who["name"] == "Ann" || who["name"] == "Bob", "{who}");
    assert!(
        who["email"]
            .as_str()
            .expect("email")
            .contains("@example.com")
    );
    assert!(data.iter().any(|t| t["assignedTo"].is_null()));
    assert_eq!(data[0]["ticketNumber"], "TKT-000025");

    // A limit above the maximum is clamped and echoed.
    let r = app.get("/tickets?limit=500", &acme.key).await;
    let body = r.assert_status(200);
    assert_eq!(body["limit"], 100);
    assert_eq!(body["data"].as_array().expect("data").len(), 25);

    // Each filter alone and every combination.
    let filters: [(&str, String); 4] = [
        ("entityId", acme.entity.id.to_string()),
        ("status", "RESOLVED".into()),
        ("priority", "HIGH".into()),
        ("assignedToId", ann.id.to_string()),
    ];
    for mask in 1u32..16 {
        let chosen: Vec<&(&str, String)> = filters
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, f)| f)
            .collect();
        let query: Vec<String> = chosen.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let want: Vec<&str> = all
            .iter()
            .filter(|t| {
                chosen.iter().all(|(k, v)| match *k {
                    "entityId" => t.entity.to_string() == *v,
                    "status" => t.status == v,
                    "priority" => t.priority == v,
                    _ => t.assignee.map(|a| a.to_string()).as_ref() == Some(v),
                })
            })
            .map(|t| t.id.as_str())
            .collect();
        let r = app
            .get(
                &format!("/tickets?limit=100&{}", query.join("&")),
                &acme.key,
            )
            .await;
        let body = r.assert_status(200);
        let got: Vec<&str> = body["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(|t| t["id"].as_str().expect("id"))
            .collect();
        assert_eq!(got, want, "filter {query:?}");
        assert_eq!(body["total"], want.len(), "total for {query:?}");
    }
    // Each single filter matches something, so the comparisons above bite.
    for (k, v) in &filters {
        let r = app.get(&format!("/tickets?{k}={v}"), &acme.key).await;
        assert!(r.assert_status(200)["total"].as_i64().expect("total") > 0);
    }

    // Offset paging walks the same order without gaps or repeats.
    let mut paged = Vec::new();
    for offset in [0, 10, 20] {
        let r = app
            .get(&format!("/tickets?limit=10&offset={offset}"), &acme.key)
            .await;
        let body = r.assert_status(200);
        assert_eq!(body["offset"], offset);
        assert_eq!(body["total"], 25);
        for t in body["data"].as_array().expect("data") {
            paged.push(id_of(t));
        }
    }
    let every: Vec<String> = all.iter().map(|t| t.id.clone()).collect();
    assert_eq!(paged, every);
    let r = app.get("/tickets?offset=25", &acme.key).await;
    assert_eq!(r.assert_status(200)["data"], json!([]));
}

/// For each subset of the list filters, the page query's plan reads the
/// index made for that subset, in order: no sort, whatever the table size.
async fn every_list_filter_combination_reads_its_index_in_order(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (company, entity, agent) = (acme.company.id, acme.entity.id, Uuid::now_v7());
    for mask in 0u32..16 {
        let has = |bit: u32| mask & (1 << bit) != 0;
        let filter = TicketFilter {
            entity_id: has(0).then_some(entity),
            status: has(1).then(|| "OPEN".to_string()),
            priority: has(2).then(|| "HIGH".to_string()),
            assigned_to_id: has(3).then_some(agent),
        };
        let suffix: String = ["e", "s", "p", "a"]
            .iter()
            .enumerate()
            .filter(|(i, _)| has(*i as u32))
            .map(|(_, c)| *c)
            .collect();
        let index = if suffix.is_empty() {
            "tickets_list".to_string()
        } else {
            format!("tickets_list_{suffix}")
        };
        let sql = store::list_sql(&filter);
        macro_rules! bind_all {
            ($q:expr) => {{
                let mut q = $q.bind(company).bind("test");
                if let Some(v) = filter.entity_id {
                    q = q.bind(v);
                }
                if let Some(v) = filter.status.as_deref() {
                    q = q.bind(v);
                }
                if let Some(v) = filter.priority.as_deref() {
                    q = q.bind(v);
                }
                if let Some(v) = filter.assigned_to_id {
                    q = q.bind(v);
                }
                q.bind(20i64).bind(0i64)
            }};
        }
        let plan: String = match &app.state.db {
            Db::Sqlite(pool) => {
                let rows = bind_all!(sqlx::query_as::<_, (i64, i64, i64, String)>(
                    sqlx::AssertSqlSafe(format!("EXPLAIN QUERY PLAN {sql}"))
                ))
                .fetch_all(pool)
                .await
                .expect("plan");
                rows.into_iter().map(|r| r.3 + "\n").collect()
            }
            Db::Postgres(pool) => {
                // An empty table would be scanned whole: make that the
                // expensive choice, so the plan shows which index serves.
                let mut tx = pool.begin().await.expect("tx");
                sqlx::query("SET LOCAL enable_seqscan = off")
                    .execute(&mut *tx)
                    .await
                    .expect("set");
                let rows = bind_all!(sqlx::query_scalar::<_, String>(sqlx::AssertSqlSafe(
                    format!("EXPLAIN {sql}")
                )))
                .fetch_all(&mut *tx)
                .await
                .expect("plan");
                rows.join("\n") + "\n"
            }
        };
        let plan_index = plan.replace('\n', " ");
        assert!(
            plan_index.contains(&format!("{index} ")),
            "{index} for {filter:?}:\n{plan}"
        );
        assert!(
            !plan.contains("TEMP B-TREE") && !plan.contains("Sort"),
            "no sort for {filter:?}:\n{plan}"
        );
    }
}

async fn patches_each_field(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = user(&app, acme.company.id, "Ann").await;
    let t = ticket(&app, &acme, json!({"subject": "Printer"})).await;
    let path = format!("/tickets/{}", id_of(&t));

    let r = app
        .patch(&path, &acme.key, json!({"status": "IN_PROGRESS"}))
        .await;
    let body = r.assert_status(200);
    assert_eq!(body["id"], t["id"]);
    assert_eq!(body["ticketNumber"], t["ticketNumber"]);
    assert_eq!(body["status"], "IN_PROGRESS");
    assert_eq!(body["priority"], "MEDIUM");
    assert_eq!(body["assignedTo"], Value::Null);

    let r = app
        .patch(&path, &acme.key, json!({"priority": "LOW"}))
        .await;
    let body = r.assert_status(200);
    assert_eq!(body["priority"], "LOW");
    assert_eq!(body["status"], "IN_PROGRESS");

    let r = app
        .patch(&path, &acme.key, json!({"assignedToId": ann.id}))
        .await;
    let body = r.assert_status(200);
    assert_eq!(body["assignedTo"]["id"], json!(ann.id));
    assert_eq!(body["assignedTo"]["name"], "Ann");
    assert_eq!(body["assignedToId"], json!(ann.id));

    let r = app.get(&path, &acme.key).await;
    let read = r.assert_status(200);
    assert_eq!(read["assignedTo"]["name"], "Ann");
    assert_eq!(read["priority"], "LOW");

    let r = app
        .patch(
            &path,
            &acme.key,
            json!({"status": "RESOLVED", "assignedToId": null}),
        )
        .await;
    let body = r.assert_status(200);
    assert_eq!(body["status"], "RESOLVED");
    assert_eq!(body["assignedTo"], Value::Null);
    assert!(is_timestamp(&body["resolvedAt"]), "{body}");

    // Every move is allowed, back to OPEN included.
    let r = app.patch(&path, &acme.key, json!({"status": "OPEN"})).await;
    let body = r.assert_status(200);
    assert_eq!(body["status"], "OPEN");
    assert_eq!(body["resolvedAt"], Value::Null);
    let r = app
        .patch(&path, &acme.key, json!({"status": "CLOSED"}))
        .await;
    assert_eq!(r.assert_status(200)["status"], "CLOSED");
}

async fn escalates_to_another_agent(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = user(&app, acme.company.id, "Ann").await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let t = ticket(&app, &acme, json!({"subject": "Outage", "priority": "LOW"})).await;
    let id = id_of(&t);
    app.patch(
        &format!("/tickets/{id}"),
        &acme.key,
        json!({"assignedToId": ann.id}),
    )
    .await
    .assert_status(200);

    let r = app
        .post(
            &format!("/tickets/{id}/escalate"),
            &acme.key,
            json!({"escalateToId": bob.id, "reason": "Customer is a VIP"}),
        )
        .await;
    let body = r.assert_status(200);
    assert_eq!(body["id"], json!(id));
    assert_eq!(body["status"], "IN_PROGRESS");
    assert_eq!(body["priority"], "URGENT");
    assert_eq!(body["assignedTo"]["id"], json!(bob.id));
    assert_eq!(body["assignedTo"]["name"], "Bob");

    let all = events(&app, acme.company.id).await;
    let (name, data) = all.last().expect("an event");
    assert_eq!(name, "ticket.escalated");
    assert_eq!(data["id"], json!(id));
    assert_eq!(data["status"], "IN_PROGRESS");
    assert_eq!(
        data["escalation"],
        json!({"reason": "Customer is a VIP", "escalatedToId": bob.id,
               "previousAssigneeId": ann.id, "automatic": false, "ruleId": null})
    );

    let r = app
        .get(&format!("/tickets/{id}/activities"), &acme.key)
        .await;
    let timeline = r.assert_status(200)["data"].clone();
    let last = timeline.as_array().expect("data").last().expect("entry");
    assert_eq!(last["type"], "escalated");
    assert_eq!(last["details"]["reason"], "Customer is a VIP");
    assert_eq!(last["details"]["previousAssigneeId"], json!(ann.id));
    assert_eq!(
        last["details"]["changes"]["priority"],
        json!({"from": "LOW", "to": "URGENT"})
    );

    // The store function escalation rules call: automatic, with the rule id.
    let rule = Uuid::now_v7();
    let escalated = store::escalate(
        &app.state.db,
        &test_tenant(acme.company.id),
        Uuid::parse_str(&id).expect("uuid"),
        Escalation {
            to_user: ann.id,
            reason: Some("No answer for 2 hours".into()),
            automatic: true,
            rule_id: Some(rule),
        },
    )
    .await
    .expect("escalated by a rule");
    assert_eq!(escalated.assigned_to_id, Some(ann.id));
    let all = events(&app, acme.company.id).await;
    let (name, data) = all.last().expect("an event");
    assert_eq!(name, "ticket.escalated");
    assert_eq!(data["escalation"]["automatic"], true);
    assert_eq!(data["escalation"]["ruleId"], json!(rule));
    assert_eq!(data["escalation"]["previousAssigneeId"], json!(bob.id));
}

async fn concurrent_creates_get_consecutive_numbers(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let requests = (0..50).map(|i| {
        app.post(
            "/tickets",
            &acme.key,
            json!({"subject": format!("Rush {i}"), "entityId": acme.entity.id}),
        )
    });
    let responses = futures::future::join_all(requests).await;
    let mut numbers: Vec<String> = responses
        .iter()
        .map(|r| {
            r.assert_status(201)["ticketNumber"]
                .as_str()
                .expect("number")
                .to_string()
        })
        .collect();
    numbers.sort();
    let expected: Vec<String> = (1..=50).map(|n| format!("TKT-{n:06}")).collect();
    assert_eq!(numbers, expected);
    let r = app.get("/tickets", &acme.key).await;
    assert_eq!(r.assert_status(200)["total"], 50);
}

async fn events_and_timeline_follow_each_operation(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = user(&app, acme.company.id, "Ann").await;
    let t = ticket(&app, &acme, json!({"subject": "Broken link"})).await;
    let id = id_of(&t);
    let path = format!("/tickets/{id}");

    let all = events(&app, acme.company.id).await;
    assert_eq!(names(&all), ["ticket.created"]);
    let created = &all[0].1;
    for field in [
        "id",
        "ticketNumber",
        "subject",
        "status",
        "priority",
        "entityId",
        "createdAt",
    ] {
        assert_eq!(created[field], t[field], "{field}");
    }
    assert_eq!(activity_types(&app, &acme.key, &id).await, ["created"]);

    // Two fields in one PATCH: one event listing both changes.
    app.patch(
        &path,
        &acme.key,
        json!({"status": "IN_PROGRESS", "priority": "HIGH"}),
    )
    .await
    .assert_status(200);
    let all = events(&app, acme.company.id).await;
    assert_eq!(names(&all), ["ticket.created", "ticket.updated"]);
    assert_eq!(
        all[1].1["changes"],
        json!({"status": {"from": "OPEN", "to": "IN_PROGRESS"},
               "priority": {"from": "MEDIUM", "to": "HIGH"}})
    );
    assert_eq!(all[1].1["status"], "IN_PROGRESS");

    // A PATCH that repeats the current values: 200, no event, no entry.
    let r = app
        .patch(
            &path,
            &acme.key,
            json!({"status": "IN_PROGRESS", "priority": "HIGH", "assignedToId": null}),
        )
        .await;
    assert_eq!(r.assert_status(200)["status"], "IN_PROGRESS");
    assert_eq!(events(&app, acme.company.id).await.len(), 2);
    assert_eq!(
        activity_types(&app, &acme.key, &id).await,
        ["created", "status_changed", "priority_changed"]
    );

    app.patch(&path, &acme.key, json!({"assignedToId": ann.id}))
        .await
        .assert_status(200);
    app.patch(&path, &acme.key, json!({"status": "RESOLVED"}))
        .await
        .assert_status(200);
    let r = app
        .post(
            &format!("{path}/comments"),
            &acme.key,
            json!({"body": "Fixed the link", "authorId": ann.id}),
        )
        .await;
    let comment = r.assert_status(201).clone();
    app.post(
        &format!("{path}/escalate"),
        &acme.key,
        json!({"escalateToId": ann.id}),
    )
    .await
    .assert_status(200);

    let all = events(&app, acme.company.id).await;
    assert_eq!(
        names(&all),
        [
            "ticket.created",
            "ticket.updated",
            "ticket.updated",
            "ticket.updated",
            "ticket.resolved",
            "comment.created",
            "ticket.escalated",
        ]
    );
    assert_eq!(
        all[2].1["changes"],
        json!({"assignedToId": {"from": null, "to": ann.id}})
    );
    assert_eq!(all[2].1["assignedTo"]["name"], "Ann");
    assert_eq!(
        all[3].1["changes"],
        json!({"status": {"from": "IN_PROGRESS", "to": "RESOLVED"}})
    );
    assert_eq!(all[4].1["id"], json!(id));
    assert_eq!(all[4].1["status"], "RESOLVED");
    assert_eq!(all[5].1["ticketId"], json!(id));
    assert_eq!(all[5].1["id"], comment["id"]);
    assert_eq!(all[5].1["body"], "Fixed the link");
    assert_eq!(all[6].1["escalation"]["reason"], Value::Null);
    assert_eq!(all[6].1["escalation"]["previousAssigneeId"], json!(ann.id));

    let r = app.get(&format!("{path}/activities"), &acme.key).await;
    let body = r.assert_status(200);
    let timeline = body["data"].as_array().expect("data");
    let types: Vec<&str> = timeline
        .iter()
        .map(|a| a["type"].as_str().expect("type"))
        .collect();
    assert_eq!(
        types,
        [
            "created",
            "status_changed",
            "priority_changed",
            "assignee_changed",
            "status_changed",
            "commented",
            "escalated",
        ]
    );
    assert_eq!(body["total"], 7);
    assert_eq!(timeline[3]["to"], json!(ann.id));
    assert_eq!(timeline[4]["from"], "IN_PROGRESS");
    assert_eq!(timeline[4]["to"], "RESOLVED");
    assert_eq!(timeline[5]["details"]["commentId"], comment["id"]);
    assert_eq!(timeline[6]["details"]["escalatedToId"], json!(ann.id));
    assert!(
        timeline
            .iter()
            .all(|a| a["ticketId"] == json!(id) && is_timestamp(&a["createdAt"]))
    );
}

async fn visitor_emails_on_creation_and_resolution_only(backend: Backend) {
    // No workers: the queued emails stay as written.
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let ann = user(&app, acme.company.id, "Ann").await;

    let t = ticket(
        &app,
        &acme,
        json!({"subject": "Lost parcel", "visitorEmail": " zoe@example.com "}),
    )
    .await;
    assert_eq!(t["visitorEmail"], "zoe@example.com");
    let id = id_of(&t);
    let path = format!("/tickets/{id}");
    let mails = emails(&app, acme.company.id).await;
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0]["to"], "zoe@example.com");
    assert!(
        mails[0]["subject"]
            .as_str()
            .expect("subject")
            .contains("TKT-000001")
    );
    assert!(
        mails[0]["text"]
            .as_str()
            .expect("text")
            .contains("TKT-000001")
    );

    // Neither changes short of resolution nor comments email the visitor.
    app.patch(
        &path,
        &acme.key,
        json!({"priority": "HIGH", "status": "IN_PROGRESS", "assignedToId": ann.id}),
    )
    .await
    .assert_status(200);
    app.post(
        &format!("{path}/comments"),
        &acme.key,
        json!({"body": "Looking"}),
    )
    .await
    .assert_status(201);
    app.post(
        &format!("{path}/escalate"),
        &acme.key,
        json!({"escalateToId": ann.id}),
    )
    .await
    .assert_status(200);
    assert_eq!(emails(&app, acme.company.id).await.len(), 1);

    app.patch(&path, &acme.key, json!({"status": "RESOLVED"}))
        .await
        .assert_status(200);
    // Repeating it or closing afterwards sends nothing more.
    app.patch(&path, &acme.key, json!({"status": "RESOLVED"}))
        .await
        .assert_status(200);
    app.patch(&path, &acme.key, json!({"status": "CLOSED"}))
        .await
        .assert_status(200);
    let mails = emails(&app, acme.company.id).await;
    assert_eq!(mails.len(), 2);
    assert_eq!(mails[1]["to"], "zoe@example.com");
    let subject = mails[1]["subject"].as_str().expect("subject");
    assert!(subject.contains("TKT-000001") && subject.contains("resolved"));

    // No visitor email, no mail.
    let quiet = ticket(&app, &acme, json!({"subject": "No email"})).await;
    app.patch(
        &format!("/tickets/{}", id_of(&quiet)),
        &acme.key,
        json!({"status": "RESOLVED"}),
    )
    .await
    .assert_status(200);
    assert_eq!(emails(&app, acme.company.id).await.len(), 2);
}

async fn comments_are_added_and_listed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let ann = user(&app, acme.company.id, "Ann").await;
    let t = ticket(&app, &acme, json!({"subject": "Question"})).await;
    let path = format!("/tickets/{}/comments", id_of(&t));

    let r = app
        .post(
            &path,
            &acme.key,
            json!({"body": "Internal note", "authorId": ann.id, "isInternal": true}),
        )
        .await;
    let first = r.assert_status(201).clone();
    assert_eq!(first["ticketId"], t["id"]);
    assert_eq!(first["body"], "Internal note");
    assert_eq!(first["authorId"], json!(ann.id));
    assert_eq!(first["author"]["name"], "Ann");
    assert_eq!(first["isInternal"], true);
    assert!(is_timestamp(&first["createdAt"]));

    let r = app
        .post(&path, &acme.key, json!({"body": "Public reply"}))
        .await;
    let second = r.assert_status(201).clone();
    assert_eq!(second["isInternal"], false);
    assert_eq!(second["author"], Value::Null);

    let r = app.get(&path, &acme.key).await;
    let body = r.assert_status(200);
    assert_eq!(body["total"], 2);
    assert_eq!(body["data"], json!([first, second]), "oldest first");
    let r = app
        .get(&format!("{path}?limit=1&offset=1"), &acme.key)
        .await;
    assert_eq!(r.assert_status(200)["data"], json!([second]));

    // A comment counts as activity on the ticket.
    let r = app.get(&format!("/tickets/{}", id_of(&t)), &acme.key).await;
    assert!(r.assert_status(200)["updatedAt"].as_str() >= t["updatedAt"].as_str());
}

async fn deletes_tickets(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let t = ticket(&app, &acme, json!({"subject": "Spam"})).await;
    let id = id_of(&t);
    app.post(
        &format!("/tickets/{id}/comments"),
        &acme.key,
        json!({"body": "spam indeed"}),
    )
    .await
    .assert_status(201);

    let writer = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::all().without(Scope::TicketsDelete),
        )
        .await;
    app.delete(&format!("/tickets/{id}"), &writer)
        .await
        .assert_error(403, "insufficient_scope");

    let r = app.delete(&format!("/tickets/{id}"), &acme.key).await;
    assert_eq!(r.assert_status(200), &json!({"id": id, "deleted": true}));
    for path in [
        format!("/tickets/{id}"),
        format!("/tickets/{id}/comments"),
        format!("/tickets/{id}/activities"),
    ] {
        app.get(&path, &acme.key)
            .await
            .assert_error(404, "not_found");
    }
    app.delete(&format!("/tickets/{id}"), &acme.key)
        .await
        .assert_error(404, "not_found");
    let r = app.get("/tickets", &acme.key).await;
    assert_eq!(r.assert_status(200)["total"], 0);

    // Numbers are never reused.
    let next = ticket(&app, &acme, json!({"subject": "Next"})).await;
    assert_eq!(next["ticketNumber"], "TKT-000002");
}

async fn foreign_unknown_and_malformed_ids_are_404(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let globex = app.company().await;
    let ann = user(&app, acme.company.id, "Ann").await;
    let gina = user(&app, globex.company.id, "Gina").await;
    let t = ticket(&app, &acme, json!({"subject": "Mine"})).await;
    let id = id_of(&t);
    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;

    // (caller's key, a user of the caller's company, the ticket id to try)
    let cases = [
        (globex.key.clone(), gina.id, id.clone()),
        (live.clone(), ann.id, id.clone()),
        (acme.key.clone(), ann.id, Uuid::now_v7().to_string()),
        (acme.key.clone(), ann.id, "not-a-ticket".to_string()),
        (acme.key.clone(), ann.id, "1234".to_string()),
    ];
    for (key, agent, target) in &cases {
        let path = format!("/tickets/{target}");
        app.get(&path, key).await.assert_error(404, "not_found");
        app.patch(&path, key, json!({"priority": "HIGH"}))
            .await
            .assert_error(404, "not_found");
        app.post(
            &format!("{path}/escalate"),
            key,
            json!({"escalateToId": agent}),
        )
        .await
        .assert_error(404, "not_found");
        app.post(&format!("{path}/comments"), key, json!({"body": "hi"}))
            .await
            .assert_error(404, "not_found");
        app.get(&format!("{path}/comments"), key)
            .await
            .assert_error(404, "not_found");
        app.get(&format!("{path}/activities"), key)
            .await
            .assert_error(404, "not_found");
        app.delete(&path, key).await.assert_error(404, "not_found");
    }

    // Nobody else sees it in a list, and it is untouched.
    for key in [&globex.key, &live] {
        let r = app.get("/tickets", key).await;
        assert_eq!(r.assert_status(200)["total"], 0);
    }
    let r = app.get(&format!("/tickets/{id}"), &acme.key).await;
    let now = r.assert_status(200);
    assert_eq!(now["priority"], "MEDIUM");
    assert_eq!(now["assignedTo"], Value::Null);
    assert_eq!(activity_types(&app, &acme.key, &id).await, ["created"]);
}

/// Asserts a 400 `validation_failed` whose details name `fields`.
#[track_caller]
fn assert_invalid(r: &crate::support::TestResponse, fields: &[&str]) {
    r.assert_error(400, "validation_failed");
    let named: Vec<&str> = r.body["details"]
        .as_array()
        .expect("details")
        .iter()
        .map(|d| d["field"].as_str().expect("field"))
        .collect();
    for field in fields {
        assert!(named.contains(field), "{field} in {}", r.text);
    }
    for detail in r.body["details"].as_array().expect("details") {
        assert!(detail["message"].is_string(), "{}", r.text);
    }
}

async fn invalid_input_is_400_with_field_details(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let globex = app.company().await;
    let gina = user(&app, globex.company.id, "Gina").await;
    let key = acme.key.as_str();
    let entity = acme.entity.id;

    // Create.
    let cases: Vec<(Value, &str)> = vec![
        (json!({"entityId": entity}), "subject"),
        (json!({"subject": "   ", "entityId": entity}), "subject"),
        (
            json!({"subject": "x".repeat(256), "entityId": entity}),
            "subject",
        ),
        (json!({"subject": 42, "entityId": entity}), "subject"),
        (json!({"subject": "Hi"}), "entityId"),
        (json!({"subject": "Hi", "entityId": "nope"}), "entityId"),
        (
            json!({"subject": "Hi", "entityId": globex.entity.id}),
            "entityId",
        ),
        (
            json!({"subject": "Hi", "entityId": Uuid::now_v7()}),
            "entityId",
        ),
        (
            json!({"subject": "Hi", "entityId": entity, "priority": "high"}),
            "priority",
        ),
        (
            json!({"subject": "Hi", "entityId": entity, "description": "d".repeat(50_001)}),
            "description",
        ),
        (
            json!({"subject": "Hi", "entityId": entity, "visitorEmail": "not-an-email"}),
            "visitorEmail",
        ),
    ];
    for (body, field) in cases {
        let r = app.post("/tickets", key, body).await;
        assert_invalid(&r, &[field]);
    }
    let r = app
        .post(
            "/tickets",
            key,
            json!({"priority": "SOON", "visitorEmail": "@", "description": "d".repeat(50_001)}),
        )
        .await;
    assert_invalid(
        &r,
        &[
            "subject",
            "entityId",
            "priority",
            "visitorEmail",
            "description",
        ],
    );
    // A description of exactly the maximum is fine.
    ticket(
        &app,
        &acme,
        json!({"subject": "Long", "description": "d".repeat(50_000)}),
    )
    .await;
    let r = app.get("/tickets", key).await;
    assert_eq!(
        r.assert_status(200)["total"],
        1,
        "nothing invalid was created"
    );

    // Update.
    let t = ticket(&app, &acme, json!({"subject": "Target"})).await;
    let path = format!("/tickets/{}", id_of(&t));
    let cases: Vec<(Value, &str)> = vec![
        (json!({}), "body"),
        (json!({"status": "DONE"}), "status"),
        (json!({"status": "open"}), "status"),
        (json!({"status": null}), "status"),
        (json!({"priority": null}), "priority"),
        (json!({"priority": "CRITICAL"}), "priority"),
        (json!({"assignedToId": "x"}), "assignedToId"),
        (json!({"assignedToId": gina.id}), "assignedToId"),
        (json!({"assignedToId": Uuid::now_v7()}), "assignedToId"),
        (json!({"subject": "Renamed"}), "subject"),
    ];
    for (body, field) in cases {
        let r = app.patch(&path, key, body).await;
        assert_invalid(&r, &[field]);
    }
    // Validation comes before the lookup: a bad body on an unknown ticket is 400.
    let r = app
        .patch(&format!("/tickets/{}", Uuid::now_v7()), key, json!({}))
        .await;
    assert_invalid(&r, &["body"]);

    // Escalate.
    let escalate = format!("{path}/escalate");
    let cases: Vec<(Value, &str)> = vec![
        (json!({}), "escalateToId"),
        (json!({"escalateToId": "x"}), "escalateToId"),
        (json!({"escalateToId": gina.id}), "escalateToId"),
        (
            json!({"escalateToId": gina.id, "reason": "r".repeat(1001)}),
            "reason",
        ),
    ];
    for (body, field) in cases {
        let r = app.post(&escalate, key, body).await;
        assert_invalid(&r, &[field]);
    }

    // Comments.
    let comments = format!("{path}/comments");
    let cases: Vec<(Value, &str)> = vec![
        (json!({}), "body"),
        (json!({"body": "  "}), "body"),
        (json!({"body": "b".repeat(50_001)}), "body"),
        (json!({"body": "hi", "authorId": "x"}), "authorId"),
        (json!({"body": "hi", "authorId": gina.id}), "authorId"),
        (json!({"body": "hi", "isInternal": "yes"}), "isInternal"),
    ];
    for (body, field) in cases {
        let r = app.post(&comments, key, body).await;
        assert_invalid(&r, &[field]);
    }

    // Nothing above changed the ticket.
    let r = app.get(&path, key).await;
    let unchanged = r.assert_status(200);
    assert_eq!(unchanged, &t);
    assert_eq!(activity_types(&app, key, &id_of(&t)).await, ["created"]);

    // List parameters.
    for (query, field) in [
        ("status=open", "status"),
        ("priority=x", "priority"),
        ("entityId=x", "entityId"),
        ("assignedToId=x", "assignedToId"),
        ("limit=0", "limit"),
        ("limit=ten", "limit"),
        ("offset=-1", "offset"),
    ] {
        let r = app.get(&format!("/tickets?{query}"), key).await;
        assert_invalid(&r, &[field]);
    }
    let r = app.get("/tickets?status=DONE&limit=0", key).await;
    assert_invalid(&r, &["status", "limit"]);
    let r = app.get(&format!("{comments}?limit=0"), key).await;
    assert_invalid(&r, &["limit"]);
}
