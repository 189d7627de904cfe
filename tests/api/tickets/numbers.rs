//! Ticket numbers under concurrent creates, on one node and across two.

use super::*;

backend_tests!(concurrent_creates_get_consecutive_numbers);

async fn concurrent_creates_get_consecutive_numbers(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let peer = app.spawn_peer().await;
    let acme = app.company().await;
    // 50 requests in flight at once, half of them on the second node.
    let requests = (0..50).map(|i| {
        let node = if i % 2 == 0 { &app } else { &peer };
        node.post(
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
    assert_eq!(numbers, expected, "distinct and without gaps");
    let r = app.get("/tickets", &acme.key).await;
    assert_eq!(r.assert_status(200)["total"], 50);
    // The sequence goes on from there.
    let next = ticket(&peer, &acme, json!({"subject": "After the rush"})).await;
    assert_eq!(next["ticketNumber"], "TKT-000051");
}

backend_tests!(numbers_keep_every_digit_past_six);

/// `TKT-` and at least six digits: the millionth ticket is `TKT-1000000`
/// (Postgres formats the number it reserves itself, SQLite in the service).
async fn numbers_keep_every_digit_past_six(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    ticket(&app, &acme, json!({"subject": "First"})).await;
    let raise = "UPDATE counters SET value = 999999 WHERE company_id = $1 AND name = 'ticket'";
    match &app.state.db {
        Db::Postgres(pool) => sqlx::query(raise)
            .bind(acme.company.id)
            .execute(pool.sqlx())
            .await
            .map(|_| ()),
        Db::Sqlite(pool) => sqlx::query(raise)
            .bind(acme.company.id)
            .execute(pool.sqlx())
            .await
            .map(|_| ()),
    }
    .expect("raise the counter");
    let millionth = ticket(&app, &acme, json!({"subject": "Millionth"})).await;
    assert_eq!(millionth["ticketNumber"], "TKT-1000000");
}

backend_tests!(a_failed_create_leaves_at_most_a_gap);

/// A create refused by the store (an entity that does not exist) after
/// Postgres has numbered it leaves that number unused; SQLite numbers in
/// the creating transaction, so there the number is given back.
async fn a_failed_create_leaves_at_most_a_gap(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let first = ticket(&app, &acme, json!({"subject": "Before"})).await;
    let refused = app
        .post(
            "/tickets",
            &acme.key,
            json!({"subject": "Nowhere", "entityId": Uuid::now_v7()}),
        )
        .await;
    refused.assert_status(400);
    let next = ticket(&app, &acme, json!({"subject": "After"})).await;
    let expected = match backend {
        Backend::Postgres => "TKT-000003",
        Backend::Sqlite => "TKT-000002",
    };
    assert_eq!(first["ticketNumber"], "TKT-000001");
    assert_eq!(next["ticketNumber"], expected);
}

postgres_tests!(a_create_does_not_wait_for_another_create_of_its_company_to_commit);

/// On Postgres a create holds no lock on its company's ticket counter while
/// its transaction runs: with one create stopped mid-transaction (its
/// ticket's entity row locked by the test), another create of the company
/// completes, and the two numbers follow the order the creates started.
/// (SQLite has one writer at a time, so there the second create waits.)
async fn a_create_does_not_wait_for_another_create_of_its_company_to_commit(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app
        .post("/entities", &acme.key, json!({"name": "Other shop"}))
        .await;
    let other_entity = other.assert_status(201)["id"].clone();
    let pool = app.postgres_pool().sqlx();

    // The ticket insert's foreign key check needs a share lock on the
    // entity row, so the first create stops there, after taking its number.
    let request = app
        .api(reqwest::Method::POST, "/tickets", Some(&acme.key))
        .json(&json!({"subject": "Stopped", "entityId": acme.entity.id}));
    let (holder, stopped) = crate::support::send_behind_a_row_lock(
        pool,
        "SELECT id FROM entities WHERE id = $1 FOR UPDATE",
        acme.entity.id,
        request,
    )
    .await;

    let free = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        app.post(
            "/tickets",
            &acme.key,
            json!({"subject": "Free", "entityId": other_entity}),
        ),
    )
    .await
    .expect("the second create went through while the first was in its transaction");
    assert_eq!(free.assert_status(201)["ticketNumber"], "TKT-000002");

    holder.rollback().await.expect("release the entity");
    let stopped = stopped.await.expect("the first create");
    assert_eq!(stopped.assert_status(201)["ticketNumber"], "TKT-000001");
}

backend_tests!(a_ticket_is_found_by_its_number);

/// `?ticketNumber=` lists the one ticket with that number, written as the
/// ticket shows it or without its prefix and leading zeros.
async fn a_ticket_is_found_by_its_number(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let mut created = Vec::new();
    for subject in ["First", "Second", "Third"] {
        created.push(ticket(&app, &acme, json!({ "subject": subject })).await);
    }
    for number in ["TKT-000002", "tkt-2", "2"] {
        let r = app
            .get(&format!("/tickets?ticketNumber={number}"), &acme.key)
            .await;
        let body = r.assert_status(200);
        let found: Vec<String> = body["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(id_of)
            .collect();
        assert_eq!(found, [id_of(&created[1])], "{number}");
        assert_eq!(body["total"], 1, "{number}");
    }
    let none = app.get("/tickets?ticketNumber=TKT-000004", &acme.key).await;
    assert_eq!(none.assert_status(200)["data"], json!([]));
    let bad = app.get("/tickets?ticketNumber=TKT-x", &acme.key).await;
    crate::support::assert_invalid(&bad, &["ticketNumber"]);
}
