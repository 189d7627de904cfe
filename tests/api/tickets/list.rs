//! GET /tickets: shape, limits, every filter combination, paging, indexes.

use super::*;
use crate::support::plan;
use supportdesk::db::Query;

backend_tests!(
    the_default_page_is_the_newest_20_with_the_item_shape,
    a_limit_above_the_maximum_is_clamped_and_echoed,
    empty_filter_values_are_no_filter,
    a_page_past_the_end_still_carries_the_total,
    each_filter_and_every_combination_selects_its_tickets,
    offset_paging_walks_the_same_order_without_gaps_or_repeats,
    every_list_filter_combination_reads_its_index_in_order,
    tag_and_custom_field_filters_probe_their_indexes,
);

/// One ticket of the list scenario, as the test expects it.
struct Expected {
    id: String,
    entity: Uuid,
    status: &'static str,
    priority: &'static str,
    assignee: Option<Uuid>,
    team: Option<String>,
}

/// 25 tickets "Ticket i": even ones in the company's entity, odd ones in a
/// second; priorities cycle; every third RESOLVED; i % 5 == 0 assigned to
/// Ann, i % 5 == 1 to Bob; i % 7 < 3 in the team Billing.
struct Listed {
    app: TestApp,
    acme: TestCompany,
    ann: User,
    team: String,
    /// Newest first.
    all: Vec<Expected>,
}

async fn listed(backend: Backend) -> Listed {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other_entity = supportdesk::entities::store::create(
        &app.state.db,
        acme.company.id,
        "Second",
        None,
        app.state.clock.now(),
    )
    .await
    .expect("entity");
    let ann = user(&app, acme.company.id, "Ann").await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let priorities = ["LOW", "MEDIUM", "HIGH", "URGENT"];
    let team = app
        .post(
            "/teams",
            &acme.key,
            json!({"name": "Billing", "memberIds": []}),
        )
        .await;
    let team = id_of(team.assert_status(201));

    let mut all = Vec::new();
    for i in 0..25usize {
        let entity = if i % 2 == 0 {
            acme.entity.id
        } else {
            other_entity.id
        };
        let in_team = (i % 7 < 3).then(|| team.clone());
        let r = app
            .post(
                "/tickets",
                &acme.key,
                json!({"subject": format!("Ticket {i}"), "entityId": entity,
                       "priority": priorities[i % 4], "teamId": in_team}),
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
            team: in_team,
        });
    }
    // Newest first.
    all.reverse();
    Listed {
        app,
        acme,
        ann,
        team,
        all,
    }
}

async fn the_default_page_is_the_newest_20_with_the_item_shape(backend: Backend) {
    let Listed { app, acme, all, .. } = listed(backend).await;
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
    // Ticket 21 (i % 5 == 1) is the newest with an assignee.
    assert_eq!(who["name"], "Bob", "{who}");
    assert!(
        who["email"]
            .as_str()
            .expect("email")
            .contains("@example.com")
    );
    assert!(data.iter().any(|t| t["assignedTo"].is_null()));
    assert_eq!(data[0]["ticketNumber"], "TKT-000025");
}

async fn a_limit_above_the_maximum_is_clamped_and_echoed(backend: Backend) {
    let Listed { app, acme, .. } = listed(backend).await;
    let r = app.get("/tickets?limit=500", &acme.key).await;
    let body = r.assert_status(200);
    assert_eq!(body["limit"], 100);
    assert_eq!(body["data"].as_array().expect("data").len(), 25);
}

async fn empty_filter_values_are_no_filter(backend: Backend) {
    let Listed { app, acme, .. } = listed(backend).await;
    let r = app
        .get(
            "/tickets?status=&priority=&entityId=&assignedToId=&teamId=",
            &acme.key,
        )
        .await;
    assert_eq!(r.assert_status(200)["total"], 25);
}

/// The total usually comes with the page's rows; a page with no rows has
/// it counted apart.
async fn a_page_past_the_end_still_carries_the_total(backend: Backend) {
    let Listed { app, acme, .. } = listed(backend).await;
    let r = app.get("/tickets?offset=25", &acme.key).await;
    let body = r.assert_status(200);
    assert_eq!(body["data"], json!([]));
    assert_eq!(body["total"], 25);
}

async fn each_filter_and_every_combination_selects_its_tickets(backend: Backend) {
    let Listed {
        app,
        acme,
        ann,
        team,
        all,
    } = listed(backend).await;
    let filters: [(&str, String); 5] = [
        ("entityId", acme.entity.id.to_string()),
        ("status", "RESOLVED".into()),
        ("priority", "HIGH".into()),
        ("assignedToId", ann.id.to_string()),
        ("teamId", team),
    ];
    for mask in 1u32..32 {
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
                    "teamId" => t.team.as_ref() == Some(v),
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
}

async fn offset_paging_walks_the_same_order_without_gaps_or_repeats(backend: Backend) {
    let Listed { app, acme, all, .. } = listed(backend).await;
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
/// index made for that subset, in order: no sort, whatever the table size;
/// a cursor page (`after`) reads the same index as the first page. With a
/// team, one of the list indexes (the team's own, or one whose columns the
/// other filters name) is read in order, never sorted.
async fn every_list_filter_combination_reads_its_index_in_order(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let (company, entity, agent) = (acme.company.id, acme.entity.id, Uuid::now_v7());
    let team = Uuid::now_v7();
    for (mask, cursor) in (0u32..32).flat_map(|mask| [(mask, false), (mask, true)]) {
        let has = |bit: u32| mask & (1 << bit) != 0;
        let filter = TicketFilter {
            entity_id: has(0).then_some(entity),
            status: has(1).then_some(supportdesk::tickets::model::TicketStatus::Open),
            priority: has(2).then_some(supportdesk::tickets::model::Priority::High),
            assigned_to_id: has(3).then_some(agent),
            team_id: has(4).then_some(team),
            ..Default::default()
        };
        let suffix: String = ["e", "s", "p", "a"]
            .iter()
            .enumerate()
            .filter(|(i, _)| has(*i as u32))
            .map(|(_, c)| *c)
            .collect();
        let index = if has(4) {
            "tickets_list".to_string()
        } else if suffix.is_empty() {
            "tickets_list ".to_string()
        } else {
            format!("tickets_list_{suffix} ")
        };
        // The binds in `list_sql`'s order; a cursor page's position is any.
        let mut query = Query::new(store::list_sql(&filter, cursor))
            .bind(company)
            .bind("test");
        if let Some(v) = filter.entity_id {
            query = query.bind(v);
        }
        if let Some(v) = filter.status {
            query = query.bind(v);
        }
        if let Some(v) = filter.priority {
            query = query.bind(v);
        }
        if let Some(v) = filter.assigned_to_id {
            query = query.bind(v);
        }
        if let Some(v) = filter.team_id {
            query = query.bind(v);
        }
        if cursor {
            query = query
                .bind(supportdesk::time::Timestamp::now())
                .bind(Uuid::now_v7());
        }
        let query = query.bind(20i64).bind(0i64);
        let off = ["enable_seqscan", "enable_bitmapscan"];
        let plan = plan(&app.state.db, query, &off).await;
        let plan_index = plan.replace('\n', " ");
        assert!(
            plan_index.contains(&index),
            "{index} for {filter:?} (cursor: {cursor}):\n{plan}"
        );
        assert!(
            !plan.contains("TEMP B-TREE") && !plan.contains("Sort"),
            "no sort for {filter:?} (cursor: {cursor}):\n{plan}"
        );
    }
}

/// A tag filter and a custom field filter (with a status) are probes of
/// their tables' indexes beside the status index: no table is scanned.
async fn tag_and_custom_field_filters_probe_their_indexes(backend: Backend) {
    use supportdesk::custom_fields::model::{FieldCondition, FieldFilter, FilterValue, Operator};
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let filter = TicketFilter {
        status: Some(supportdesk::tickets::model::TicketStatus::Open),
        tags: supportdesk::tags::model::TagFilter {
            all: vec!["vip".into()],
            any: Vec::new(),
        },
        custom_fields: FieldFilter {
            conditions: vec![FieldCondition {
                key: "order_total".into(),
                operator: Operator::Gte,
                value: FilterValue::Number(100.0),
            }],
        },
        ..Default::default()
    };
    let query = Query::new(store::list_sql(&filter, false))
        .bind(acme.company.id)
        .bind("test")
        .bind("OPEN")
        .bind("vip")
        .bind("order_total")
        .bind(100.0f64)
        .bind(20i64)
        .bind(0i64);
    let plan = plan(&app.state.db, query, &["enable_seqscan"]).await;
    let tag_key = match backend {
        Backend::Postgres => "ticket_tags_pkey",
        Backend::Sqlite => "sqlite_autoindex_ticket_tags_1",
    };
    for index in ["tickets_list_s", tag_key, "ticket_field_values_record"] {
        assert!(plan.contains(index), "{index}:\n{plan}");
    }
    assert!(
        !plan.contains("Seq Scan") && !plan.contains("SCAN "),
        "no table scan:\n{plan}"
    );
}
