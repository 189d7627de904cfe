//! Which requests share a key, what a reused key or a running request gets,
//! what is not recorded, the header's form, expiry, and the document.

use std::time::Duration;

use reqwest::Method;
use reqwest::header::HeaderValue;
use serde_json::{Value, json};
use supportdesk::auth::{Mode, Scope, ScopeSet};
use uuid::Uuid;

use super::{assert_replayed, count, post_keyed};
use crate::backend_tests;
use crate::idempotency::replay::key_without;
use crate::postgres_tests;
use crate::support::{Backend, TestApp, TestCompany, TestResponse};

backend_tests!(
    concurrent_repeats_create_one_ticket,
    concurrent_repeats_through_two_nodes_create_one_ticket,
    a_used_key_with_another_body_or_path_is_refused,
    keys_belong_to_one_api_key_company_and_mode,
    refused_requests_leave_the_key_free,
    validation_errors_are_replayed,
    a_malformed_header_is_a_validation_error_naming_it,
    an_expired_key_can_be_used_again,
    a_request_that_stopped_before_its_change_is_run_again,
    a_change_whose_answer_was_lost_is_not_run_again,
    every_post_documents_the_header,
);
postgres_tests!(a_create_whose_key_was_taken_over_meanwhile_commits_nothing);

fn ticket_body(acme: &TestCompany) -> Value {
    json!({"subject": "Lost parcel", "entityId": acme.entity.id})
}

async fn tickets(app: &TestApp, acme: &TestCompany) -> i64 {
    count(app, "tickets", acme.company.id, "").await
}

/// Sends ten identical keyed requests at once, through `nodes` in turn;
/// asserts each answer is the stored 201 or 409 in progress; returns the 201.
async fn ten_at_once(nodes: &[&TestApp], acme: &TestCompany) -> TestResponse {
    let body = ticket_body(acme);
    let sends =
        (0..10).map(|i| post_keyed(nodes[i % nodes.len()], "/tickets", &acme.key, "once", &body));
    let answers = futures::future::join_all(sends).await;
    let created: Vec<&TestResponse> = answers.iter().filter(|r| r.status == 201).collect();
    assert!(!created.is_empty(), "no 201 among {answers:?}");
    for answer in &answers {
        if answer.status == 201 {
            assert_eq!(answer.text, created[0].text);
        } else {
            answer.assert_error(409, "idempotency_in_progress");
            assert_eq!(answer.header("retry-after"), Some("1"));
        }
    }
    let later = post_keyed(nodes[0], "/tickets", &acme.key, "once", &body).await;
    assert_eq!(later.status, 201, "{}", later.text);
    assert_eq!(later.text, created[0].text);
    assert_eq!(later.header("idempotent-replayed"), Some("true"));
    later
}

async fn concurrent_repeats_create_one_ticket(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    ten_at_once(&[&app], &acme).await;
    assert_eq!(tickets(&app, &acme).await, 1);
}

async fn concurrent_repeats_through_two_nodes_create_one_ticket(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let peer = app.spawn_peer().await;
    let acme = app.company().await;
    ten_at_once(&[&app, &peer], &acme).await;
    assert_eq!(tickets(&app, &acme).await, 1);
}

async fn a_used_key_with_another_body_or_path_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let body = ticket_body(&acme);
    post_keyed(&app, "/tickets", &acme.key, "k1", &body)
        .await
        .assert_status(201);

    let mut other_body = body.clone();
    other_body["subject"] = json!("Another parcel");
    post_keyed(&app, "/tickets", &acme.key, "k1", &other_body)
        .await
        .assert_error(422, "idempotency_key_reused");
    let session = json!({"entityId": acme.entity.id});
    post_keyed(&app, "/chat/sessions", &acme.key, "k1", &session)
        .await
        .assert_error(422, "idempotency_key_reused");
    assert_eq!(tickets(&app, &acme).await, 1);
    assert_eq!(count(&app, "chat_sessions", acme.company.id, "").await, 0);
}

async fn keys_belong_to_one_api_key_company_and_mode(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let globex = app.company().await;
    let body = ticket_body(&acme);
    let first = post_keyed(&app, "/tickets", &acme.key, "shared", &body).await;
    assert_eq!(first.status, 201, "{}", first.text);

    // Another API key of the same company and mode: refused, not replayed.
    let second_key = app.key(acme.company.id, Mode::Test, ScopeSet::all()).await;
    post_keyed(&app, "/tickets", &second_key, "shared", &body)
        .await
        .assert_error(422, "idempotency_key_reused");

    // The LIVE mode of the company, and another company: unrelated.
    let live_key = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    let live = post_keyed(&app, "/tickets", &live_key, "shared", &body).await;
    assert_eq!(live.status, 201, "{}", live.text);
    assert_eq!(live.header("idempotent-replayed"), None);
    let other_body = ticket_body(&globex);
    let other = post_keyed(&app, "/tickets", &globex.key, "shared", &other_body).await;
    assert_eq!(other.status, 201, "{}", other.text);
    assert_eq!(other.header("idempotent-replayed"), None);
    assert_eq!(tickets(&app, &acme).await, 2);
    assert_eq!(tickets(&app, &globex).await, 1);
}

async fn refused_requests_leave_the_key_free(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let body = ticket_body(&acme);

    let invalid = "svc_test_0000000000000000000000000000000000000000";
    post_keyed(&app, "/tickets", invalid, "k", &body)
        .await
        .assert_error(401, "invalid_api_key");
    let read_only = key_without(&app, &acme, Scope::TicketsWrite).await;
    post_keyed(&app, "/tickets", &read_only, "k", &body)
        .await
        .assert_error(403, "insufficient_scope");
    let limited = app
        .key_with(acme.company.id, Mode::Test, ScopeSet::all(), 1)
        .await;
    app.get("/tickets", &limited).await.assert_status(200);
    post_keyed(&app, "/tickets", &limited, "k", &body)
        .await
        .assert_error(429, "rate_limited");
    assert_eq!(tickets(&app, &acme).await, 0);

    // The key is free: the request runs, and from now on is the key's.
    let runs = post_keyed(&app, "/tickets", &acme.key, "k", &body).await;
    assert_eq!(runs.status, 201, "{}", runs.text);
    let repeat = post_keyed(&app, "/tickets", &acme.key, "k", &body).await;
    assert_replayed(&runs, &repeat);
    assert_eq!(tickets(&app, &acme).await, 1);
}

async fn validation_errors_are_replayed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let body = json!({"entityId": acme.entity.id});
    let first = post_keyed(&app, "/tickets", &acme.key, "bad", &body).await;
    first.assert_error(400, "validation_failed");
    let repeat = post_keyed(&app, "/tickets", &acme.key, "bad", &body).await;
    assert_replayed(&first, &repeat);
}

async fn a_malformed_header_is_a_validation_error_naming_it(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let body = ticket_body(&acme);
    let too_long = "k".repeat(256);
    let values = [
        HeaderValue::from_static(""),
        HeaderValue::from_str(&too_long).expect("header"),
        HeaderValue::from_bytes("clé".as_bytes()).expect("header"),
        HeaderValue::from_static("tab\there"),
    ];
    for value in values {
        let r = TestResponse::from(
            app.api(Method::POST, "/tickets", Some(&acme.key))
                .header("Idempotency-Key", value.clone())
                .json(&body)
                .send()
                .await,
        )
        .await;
        r.assert_error(400, "validation_failed");
        assert_eq!(
            r.body["details"][0]["field"], "Idempotency-Key",
            "{value:?}"
        );
    }
    let widget = TestResponse::from(
        app.client
            .post(app.url("/widget/v1/sessions"))
            .header("Idempotency-Key", too_long.as_str())
            .json(&json!({"widgetKey": acme.entity.widget_key_test}))
            .send()
            .await,
    )
    .await;
    widget.assert_error(400, "validation_failed");
    assert_eq!(widget.body["details"][0]["field"], "Idempotency-Key");
    assert_eq!(tickets(&app, &acme).await, 0);
    assert_eq!(count(&app, "chat_sessions", acme.company.id, "").await, 0);
    // The longest key accepted, and every printable character.
    let printable: String = (0x20u8..=0x7e).map(char::from).collect();
    for key in ["k".repeat(255), printable] {
        post_keyed(&app, "/tickets", &acme.key, &key, &body)
            .await
            .assert_status(201);
    }
}

async fn an_expired_key_can_be_used_again(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| {
        c.idempotency_ttl = Duration::from_secs(2);
    })
    .await;
    let acme = app.company().await;
    let body = ticket_body(&acme);
    let first = post_keyed(&app, "/tickets", &acme.key, "short", &body).await;
    assert_eq!(first.status, 201, "{}", first.text);
    // Replayed while kept (the TTL outlasts these two requests)...
    let repeat = post_keyed(&app, "/tickets", &acme.key, "short", &body).await;
    assert_replayed(&first, &repeat);
    expire_record(&app, &acme, "short").await;

    // ...and free once expired.
    let again = post_keyed(&app, "/tickets", &acme.key, "short", &body).await;
    assert_eq!(again.status, 201, "{}", again.text);
    assert_eq!(again.header("idempotent-replayed"), None);
    assert_eq!(tickets(&app, &acme).await, 2);
}

/// Moves the expiry of the company's record of `key` two minutes into the
/// past: its TTL runs out by the database's clock, which expiry is read
/// with and which a test cannot move forward.
async fn expire_record(app: &TestApp, acme: &TestCompany, key: &str) {
    let past = supportdesk::time::Timestamp::from_datetime(
        chrono::Utc::now() - chrono::Duration::seconds(120),
    );
    let aged = supportdesk::on_db!(&app.state.db, c => sqlx::query(
        "UPDATE idempotency_keys SET expires_at = $1 WHERE company_id = $2 AND idempotency_key = $3")
        .bind(past)
        .bind(acme.company.id)
        .bind(key)
        .execute(c)
        .await
        .expect("record aged")
        .rows_affected());
    assert_eq!(aged, 1);
}

/// Sets the state and lease of the company's row of `key` (a node that
/// died holding it).
async fn age_claim(app: &TestApp, acme: &TestCompany, key: &str, state: &str) {
    let past = supportdesk::time::Timestamp::from_datetime(
        chrono::Utc::now() - chrono::Duration::seconds(120),
    );
    let aged = supportdesk::on_db!(&app.state.db, c => sqlx::query(
        "UPDATE idempotency_keys SET state = $1, lease_until = $2, claim_token = $3, \
         response_status = NULL, response_body = NULL WHERE company_id = $4 AND idempotency_key = $5")
        .bind(state)
        .bind(past)
        .bind(Uuid::new_v4())
        .bind(acme.company.id)
        .bind(key)
        .execute(c)
        .await
        .expect("row aged")
        .rows_affected());
    assert_eq!(aged, 1);
}

async fn a_request_that_stopped_before_its_change_is_run_again(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let body = json!({"entityId": acme.entity.id});
    // A first request that changed nothing (its answer, a 400, recorded),
    // then made to look like a node that died while running it.
    post_keyed(&app, "/tickets", &acme.key, "stalled", &body)
        .await
        .assert_status(400);
    age_claim(&app, &acme, "stalled", "running").await;

    let again = post_keyed(&app, "/tickets", &acme.key, "stalled", &body).await;
    again.assert_error(400, "validation_failed");
    assert_eq!(again.header("idempotent-replayed"), None);
    let replay = post_keyed(&app, "/tickets", &acme.key, "stalled", &body).await;
    assert_replayed(&again, &replay);
}

async fn a_change_whose_answer_was_lost_is_not_run_again(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let body = ticket_body(&acme);
    post_keyed(&app, "/tickets", &acme.key, "lost", &body)
        .await
        .assert_status(201);
    // The change committed, the node died before storing the answer.
    age_claim(&app, &acme, "lost", "applied").await;

    post_keyed(&app, "/tickets", &acme.key, "lost", &body)
        .await
        .assert_error(409, "idempotency_response_lost");
    assert_eq!(tickets(&app, &acme).await, 1);
}

async fn every_post_documents_the_header(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let r = app.client.get(app.url("/api/v1/openapi.json")).send().await;
    let document = TestResponse::from(r).await;
    let paths = document.assert_status(200)["paths"]
        .as_object()
        .expect("paths")
        .clone();
    let mut posts = 0;
    // The API's POSTs; of the widget's, only starting a chat takes the key.
    // The sign-in routes (`/api/v1/auth/…`) sit outside authentication,
    // where a key has no company to be scoped to: they take none; nor do
    // the mail providers' inbound webhooks (`/api/v1/inbound/…`), which
    // send none and are made idempotent by each message's Message-ID.
    let keyed = paths.into_iter().filter(|(path, _)| {
        (path.starts_with("/api/v1/")
            && !path.starts_with("/api/v1/auth/")
            && !path.starts_with("/api/v1/inbound/"))
            || path == "/widget/v1/sessions"
    });
    for (path, item) in keyed {
        let Some(post) = item.get("post") else {
            continue;
        };
        posts += 1;
        let parameters = post["parameters"].as_array().cloned().unwrap_or_default();
        assert!(
            parameters
                .iter()
                .any(|p| p["name"] == "Idempotency-Key" && p["in"] == "header"),
            "POST {path}"
        );
        let responses = post["responses"].as_object().expect("responses");
        // A malformed key is a 400 on every POST, even one whose body
        // cannot be invalid.
        for status in ["400", "409", "422"] {
            assert!(
                responses.contains_key(status),
                "POST {path} documents {status}"
            );
        }
        let successes: Vec<_> = responses
            .iter()
            .filter(|(status, _)| status.starts_with('2'))
            .collect();
        assert!(!successes.is_empty(), "POST {path}");
        for (status, response) in successes {
            assert!(
                response["headers"]["Idempotent-Replayed"].is_object(),
                "POST {path} {status}"
            );
        }
    }
    assert!(posts > 10, "{posts} POST operations");
}

/// On Postgres a create marks its key applied in the statement that writes
/// the ticket: when another request took the key over meanwhile (after the
/// lease passed), that mark finds the row no longer ours and the create
/// commits nothing. The create is held before that statement by a lock on
/// the company's ticket counter, the takeover made while it waits.
async fn a_create_whose_key_was_taken_over_meanwhile_commits_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let body = ticket_body(&acme);
    app.post("/tickets", &acme.key, body.clone())
        .await
        .assert_status(201);
    let pool = app.postgres_pool().sqlx();

    let request = app
        .api(Method::POST, "/tickets", Some(&acme.key))
        .header("Idempotency-Key", "taken")
        .json(&body);
    let (holder, held) =
        crate::support::send_behind_the_ticket_counter(pool, acme.company.id, request).await;
    let taken = sqlx::query(
        "UPDATE idempotency_keys SET claim_token = $1 \
         WHERE company_id = $2 AND idempotency_key = 'taken'",
    )
    .bind(Uuid::new_v4())
    .bind(acme.company.id)
    .execute(pool)
    .await
    .expect("take the key over");
    assert_eq!(taken.rows_affected(), 1);
    holder.rollback().await.expect("release the counter");

    let answer = held.await.expect("the create");
    assert_eq!(answer.status, 409, "{}", answer.text);
    assert_eq!(tickets(&app, &acme).await, 1);
}
