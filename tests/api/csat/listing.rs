//! `GET /ratings` with its filters and paging, `csat.*` webhooks delivered
//! once each, and the report's CSAT figures over a fixed data set.

use serde_json::{Value, json};

use super::{closed_chat, email_texts, link_token, rate, resolved_ticket};
use crate::backend_tests;
use crate::outbound::support::{Receiver, create_webhook, drive_until, fast_retries, settle};
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    ratings_list_by_entity_period_and_score_with_paging,
    csat_events_are_delivered_once_each,
    reports_give_the_csat_average_count_and_distribution,
    a_period_that_ends_before_it_starts_is_400_on_from,
);

async fn a_period_that_ends_before_it_starts_is_400_on_from(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = app
        .get("/ratings?from=2026-03-02&to=2026-03-01", &acme.key)
        .await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.body["details"][0]["field"], "from", "{}", r.text);
}

/// Rates a new closed chat of `acme`'s entity with `score`, through `node`.
async fn rated_chat(app: &TestApp, node: &TestApp, acme: &TestCompany, score: i64) {
    let (_, token) = closed_chat(app, acme).await;
    rate(node, Some(&token), json!({"score": score}))
        .await
        .assert_status(201);
}

/// A second company-mate of `acme`: the same company and key, another entity.
async fn other_entity(app: &TestApp, acme: &TestCompany) -> TestCompany {
    let r = app
        .post("/entities", &acme.key, json!({"name": "Other"}))
        .await;
    let id: uuid::Uuid = r.assert_status(201)["id"]
        .as_str()
        .expect("id")
        .parse()
        .expect("uuid");
    let entity = supportdesk::entities::store::find(&app.state.db, acme.company.id, id)
        .await
        .expect("entity");
    TestCompany {
        company: acme.company.clone(),
        entity,
        key: acme.key.clone(),
    }
}

/// The fixed data set: the main entity's chats rated 5, 5, 4, 1 and a
/// ticket rated 3 today, a chat rated 2 three days ago; the other entity's
/// chat rated 1 today.
async fn data_set(app: &TestApp, acme: &TestCompany) -> TestCompany {
    for score in [5, 5, 4, 1] {
        rated_chat(app, app, acme, score).await;
    }
    resolved_ticket(app, acme).await;
    let texts = email_texts(app, acme.company.id).await;
    let token = texts.iter().find_map(|t| link_token(t)).expect("link");
    rate(app, None, json!({"token": token, "score": 3}))
        .await
        .assert_status(201);
    let earlier = app
        .spawn_peer_with(|c| c.clock_offset = -chrono::TimeDelta::days(3))
        .await;
    rated_chat(app, &earlier, acme, 2).await;
    let other = other_entity(app, acme).await;
    rated_chat(app, app, &other, 1).await;
    other
}

fn today() -> String {
    chrono::Utc::now().date_naive().to_string()
}

fn scores(body: &Value) -> Vec<i64> {
    body["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|r| r["score"].as_i64().expect("score"))
        .collect()
}

async fn ratings_list_by_entity_period_and_score_with_paging(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let other = data_set(&app, &acme).await;
    let main = acme.entity.id;

    let all = app.get("/ratings", &acme.key).await;
    assert_eq!(all.assert_status(200)["total"], 7);
    let of_main = app
        .get(&format!("/ratings?entityId={main}"), &acme.key)
        .await;
    assert_eq!(scores(of_main.assert_status(200)), [3, 1, 4, 5, 5, 2]);
    let of_other = app
        .get(&format!("/ratings?entityId={}", other.entity.id), &acme.key)
        .await;
    assert_eq!(scores(of_other.assert_status(200)), [1]);
    let fives = app
        .get(&format!("/ratings?entityId={main}&score=5"), &acme.key)
        .await;
    assert_eq!(fives.assert_status(200)["total"], 2);
    let today = app
        .get(
            &format!("/ratings?entityId={main}&from={}", today()),
            &acme.key,
        )
        .await;
    assert_eq!(scores(today.assert_status(200)), [3, 1, 4, 5, 5]);

    // Pages of two, by cursor, give the same order.
    let first = app
        .get(&format!("/ratings?entityId={main}&limit=2"), &acme.key)
        .await;
    let first = first.assert_status(200).clone();
    assert_eq!(scores(&first), [3, 1]);
    let cursor = first["nextCursor"].as_str().expect("nextCursor");
    let second = app
        .get(
            &format!("/ratings?entityId={main}&limit=2&after={cursor}"),
            &acme.key,
        )
        .await;
    assert_eq!(scores(second.assert_status(200)), [4, 5]);

    for bad in ["score=0", "score=x", "from=yesterday", "entityId=nope"] {
        let r = app.get(&format!("/ratings?{bad}"), &acme.key).await;
        r.assert_error(400, "validation_failed");
    }
}

async fn reports_give_the_csat_average_count_and_distribution(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    data_set(&app, &acme).await;
    let main = acme.entity.id;

    let r = app
        .get(
            &format!("/reports/tickets?entityId={main}&from={}", today()),
            &acme.key,
        )
        .await;
    assert_eq!(
        r.assert_status(200)["csat"],
        json!({"count": 5, "average": 3.6,
               "distribution": {"1": 1, "2": 0, "3": 1, "4": 1, "5": 2}})
    );
    let r = app
        .get(&format!("/reports/tickets?entityId={main}"), &acme.key)
        .await;
    assert_eq!(
        r.assert_status(200)["csat"],
        json!({"count": 6, "average": 3.33,
               "distribution": {"1": 1, "2": 1, "3": 1, "4": 1, "5": 2}})
    );
    let r = app.get("/reports/tickets", &acme.key).await;
    assert_eq!(r.assert_status(200)["csat"]["count"], 7);
    let r = app
        .get(
            &format!("/reports/tickets?entityId={main}&to=2020-01-01&from=2019-12-01"),
            &acme.key,
        )
        .await;
    assert_eq!(
        r.assert_status(200)["csat"],
        json!({"count": 0, "average": null,
               "distribution": {"1": 0, "2": 0, "3": 0, "4": 0, "5": 0}})
    );
}

async fn csat_events_are_delivered_once_each(backend: Backend) {
    let app = TestApp::spawn_with(backend, fast_retries).await;
    let acme = app.company().await;
    let receiver = Receiver::always(200).await;
    create_webhook(
        &app,
        &acme.key,
        &receiver.url("/hook"),
        &["csat.submitted", "csat.updated"],
    )
    .await;
    let (id, token) = closed_chat(&app, &acme).await;
    let first = rate(&app, Some(&token), json!({"score": 2})).await;
    let rating_id = first.assert_status(201)["id"].clone();
    rate(
        &app,
        Some(&token),
        json!({"score": 4, "comment": "Solved after all"}),
    )
    .await
    .assert_status(200);

    drive_until(&app, "two deliveries", || receiver.count() >= 2).await;
    settle(&app).await;
    let hits = receiver.hits();
    assert_eq!(hits.len(), 2);
    let mut bodies: Vec<Value> = hits.iter().map(|h| h.json()).collect();
    bodies.sort_by_key(|b| b["event"].as_str().map(str::to_string));
    assert_eq!(bodies[0]["event"], "csat.submitted");
    assert_eq!(bodies[0]["data"]["id"], rating_id);
    assert_eq!(bodies[0]["data"]["score"], 2);
    assert_eq!(bodies[0]["data"]["chatSessionId"], json!(id));
    assert_eq!(bodies[1]["event"], "csat.updated");
    assert_eq!(bodies[1]["data"]["score"], 4);
    assert_eq!(bodies[1]["data"]["comment"], "Solved after all");
    assert_eq!(
        bodies[1]["data"]["previous"],
        json!({"score": 2, "comment": null})
    );
}
