//! Delivery: signatures, subscriptions and modes, the retry schedule, the
//! delivery log, timeouts, crashes, rollbacks and disabling.

use std::time::Duration;

use serde_json::json;
use supportdesk::auth::{Mode, ScopeSet};
use supportdesk::events::EventName;

use super::support::{
    self, DELIVERED_WITHIN, Receiver, Reply, create_user, create_webhook, deliveries, drive_until,
    drive_until_api, settle, tenant,
};
use crate::backend_tests;
use crate::support::{Backend, TestApp, eventually_within};

backend_tests!(
    subscribed_event_arrives_signed,
    unsubscribed_and_other_mode_events_are_not_delivered,
    failing_twice_then_ok_is_three_attempts_of_one_delivery,
    always_failing_receiver_gets_exactly_five_attempts,
    hanging_and_redirecting_receivers_count_as_failures,
    killed_worker_means_redelivery_after_the_lease,
    rolled_back_change_delivers_nothing,
    gone_disables_at_once_and_a_day_of_failures_disables,
    test_ping_and_manual_redelivery,
    a_hanging_endpoint_does_not_hold_up_others,
);

async fn subscribed_event_arrives_signed(backend: Backend) {
    // The background worker (run_workers on) delivers by itself.
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let receiver = Receiver::always(200).await;
    let (webhook, secret) =
        create_webhook(&app, &acme.key, &receiver.url("/hooks"), &["user.created"]).await;
    let user_id = create_user(&app, &tenant(&acme, Mode::Test), "Ada").await;

    eventually_within("a delivery", DELIVERED_WITHIN, || async {
        receiver.count() > 0
    })
    .await;
    let hit = receiver.hits()[0].clone();
    assert_eq!(hit.path, "/hooks");
    assert_eq!(hit.header("content-type"), "application/json");
    assert_eq!(hit.header("x-service-event"), "user.created");
    assert_eq!(hit.header("x-service-attempt"), "1");
    assert!(support::service_signature_valid(
        &secret,
        &hit.body,
        hit.header("x-service-signature")
    ));
    assert!(support::standard_signature_valid(&secret, &hit));
    // A tampered body fails verification.
    let mut tampered = hit.body.to_vec();
    tampered.push(b' ');
    assert!(!support::service_signature_valid(
        &secret,
        &tampered,
        hit.header("x-service-signature")
    ));
    let delivery_id = hit.header("x-service-delivery").to_string();
    assert_eq!(hit.header("webhook-id"), delivery_id);
    let ts: i64 = hit
        .header("webhook-timestamp")
        .parse()
        .expect("unix seconds");
    assert!((ts - chrono::Utc::now().timestamp()).abs() < 300);

    let body = hit.json();
    assert_eq!(body["event"], "user.created");
    assert_eq!(body["mode"], "TEST");
    assert_eq!(body["data"]["id"], user_id.to_string());
    assert_eq!(body["data"]["name"], "Ada");
    assert!(body["id"].is_string());
    assert!(
        body["timestamp"]
            .as_str()
            .expect("timestamp")
            .ends_with('Z')
    );

    // The log shows it delivered once.
    let key = acme.key.clone();
    drive_until_api(&app, "delivery recorded", || {
        let (app, key, webhook) = (&app, key.clone(), webhook.clone());
        async move { deliveries(app, &key, &webhook).await[0]["status"] == "delivered" }
    })
    .await;
    let log = deliveries(&app, &acme.key, &webhook).await;
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["id"], delivery_id);
    assert_eq!(log[0]["eventId"], body["id"]);
    assert_eq!(log[0]["attemptCount"], 1);
    assert_eq!(log[0]["attempts"][0]["responseStatus"], 200);
    assert_eq!(log[0]["attempts"][0]["success"], true);
    assert!(log[0]["deliveredAt"].is_string());
    assert!(log[0]["nextAttemptAt"].is_null());
}

async fn unsubscribed_and_other_mode_events_are_not_delivered(backend: Backend) {
    let app = TestApp::spawn_with(backend, support::fast_retries).await;
    let acme = app.company().await;
    let other = app.company().await;
    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    let receiver = Receiver::always(200).await;
    create_webhook(
        &app,
        &acme.key,
        &receiver.url("/tickets"),
        &["ticket.created"],
    )
    .await;
    create_webhook(&app, &live, &receiver.url("/live"), &["user.created"]).await;
    create_webhook(&app, &other.key, &receiver.url("/other"), &["user.created"]).await;
    let (inactive, _) = create_webhook(
        &app,
        &acme.key,
        &receiver.url("/inactive"),
        &["user.created"],
    )
    .await;
    app.patch(
        &format!("/company/webhooks/{inactive}"),
        &acme.key,
        json!({"isActive": false}),
    )
    .await
    .assert_status(200);
    create_webhook(&app, &acme.key, &receiver.url("/users"), &["user.created"]).await;

    create_user(&app, &tenant(&acme, Mode::Test), "Test-mode user").await;
    drive_until(&app, "the subscribed webhook", || receiver.count() >= 1).await;
    settle(&app).await;
    let paths: Vec<String> = receiver.hits().iter().map(|h| h.path.clone()).collect();
    assert_eq!(paths, ["/users"]);

    // A live-mode event reaches only the live webhook.
    create_user(&app, &tenant(&acme, Mode::Live), "Live-mode user").await;
    drive_until(&app, "the live webhook", || receiver.count() >= 2).await;
    settle(&app).await;
    let hits = receiver.hits();
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[1].path, "/live");
    assert_eq!(hits[1].json()["mode"], "LIVE");
}

async fn failing_twice_then_ok_is_three_attempts_of_one_delivery(backend: Backend) {
    let app = TestApp::spawn_with(backend, support::fast_retries).await;
    let acme = app.company().await;
    let receiver = Receiver::start(|n| Reply::Status(if n <= 2 { 500 } else { 200 })).await;
    let (webhook, secret) =
        create_webhook(&app, &acme.key, &receiver.url("/"), &["user.created"]).await;
    create_user(&app, &tenant(&acme, Mode::Test), "Retry").await;

    drive_until(&app, "third attempt", || receiver.count() >= 3).await;
    settle(&app).await;
    let hits = receiver.hits();
    assert_eq!(hits.len(), 3);
    let id = hits[0].header("x-service-delivery");
    for (i, hit) in hits.iter().enumerate() {
        assert_eq!(hit.header("x-service-delivery"), id, "same delivery id");
        assert_eq!(hit.header("webhook-id"), id);
        assert_eq!(hit.header("x-service-attempt"), (i + 1).to_string());
        assert_eq!(hit.body, hits[0].body, "the same bytes on every attempt");
        assert!(support::service_signature_valid(
            &secret,
            &hit.body,
            hit.header("x-service-signature")
        ));
        assert!(support::standard_signature_valid(&secret, hit));
    }

    let log = deliveries(&app, &acme.key, &webhook).await;
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["id"], id);
    assert_eq!(log[0]["status"], "delivered");
    assert_eq!(log[0]["attemptCount"], 3);
    let attempts = log[0]["attempts"].as_array().expect("attempts");
    let statuses: Vec<_> = attempts
        .iter()
        .map(|a| a["responseStatus"].clone())
        .collect();
    assert_eq!(statuses, [json!(500), json!(500), json!(200)]);
    assert_eq!(attempts[0]["success"], false);
    assert_eq!(attempts[0]["error"], "HTTP 500");
    // A success ends the webhook's failure run.
    let webhook = app
        .get(&format!("/company/webhooks/{webhook}"), &acme.key)
        .await;
    assert!(webhook.assert_status(200)["failingSince"].is_null());
}

async fn always_failing_receiver_gets_exactly_five_attempts(backend: Backend) {
    let app = TestApp::spawn_with(backend, support::fast_retries).await;
    let acme = app.company().await;
    let receiver = Receiver::start(|_| Reply::LongBody(503)).await;
    let (webhook, _) = create_webhook(&app, &acme.key, &receiver.url("/"), &["user.created"]).await;
    create_user(&app, &tenant(&acme, Mode::Test), "Doomed").await;

    let key = acme.key.clone();
    drive_until_api(&app, "delivery failed", || {
        let (app, key, webhook) = (&app, key.clone(), webhook.clone());
        async move { deliveries(app, &key, &webhook).await[0]["status"] == "failed" }
    })
    .await;
    settle(&app).await;
    assert_eq!(receiver.count(), 5);
    let attempt_headers: Vec<String> = receiver
        .hits()
        .iter()
        .map(|h| h.header("x-service-attempt").to_string())
        .collect();
    assert_eq!(attempt_headers, ["1", "2", "3", "4", "5"]);

    let log = deliveries(&app, &acme.key, &webhook).await;
    assert_eq!(log[0]["attemptCount"], 5);
    assert!(log[0]["nextAttemptAt"].is_null());
    assert_eq!(log[0]["lastResponseStatus"], 503);
    let attempts = log[0]["attempts"].as_array().expect("attempts");
    assert_eq!(attempts.len(), 5, "every attempt is logged");
    for (i, attempt) in attempts.iter().enumerate() {
        assert_eq!(attempt["attempt"], i + 1);
        assert_eq!(attempt["responseStatus"], 503);
        assert_eq!(attempt["success"], false);
        assert!(attempt["attemptedAt"].is_string());
        let body = attempt["responseBody"].as_str().expect("response body");
        assert_eq!(body.len(), 1024, "response bodies are truncated");
    }
    // Failures start the webhook's failure run (not yet 24 h: still active).
    let got = app
        .get(&format!("/company/webhooks/{webhook}"), &acme.key)
        .await;
    let got = got.assert_status(200);
    assert!(got["failingSince"].is_string());
    assert_eq!(got["isActive"], true);
    // A new URL starts a fresh failure run.
    let r = app
        .patch(
            &format!("/company/webhooks/{webhook}"),
            &acme.key,
            json!({"url": receiver.url("/new")}),
        )
        .await;
    assert!(r.assert_status(200)["failingSince"].is_null());
    // Status filter on the log.
    let r = app
        .get(
            &format!("/company/webhooks/{webhook}/deliveries?status=delivered"),
            &acme.key,
        )
        .await;
    assert_eq!(r.assert_status(200)["total"], 0);
    app.get(
        &format!("/company/webhooks/{webhook}/deliveries?status=lost"),
        &acme.key,
    )
    .await
    .assert_error(400, "validation_failed");
}

async fn hanging_and_redirecting_receivers_count_as_failures(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| {
        support::fast_retries(c);
        c.webhook_timeout = Duration::from_secs(1);
    })
    .await;
    let acme = app.company().await;
    let receiver = Receiver::start(|n| match n {
        1 => Reply::Hang,
        2 => Reply::Redirect,
        _ => Reply::Status(204),
    })
    .await;
    let (webhook, _) = create_webhook(&app, &acme.key, &receiver.url("/"), &["user.created"]).await;
    create_user(&app, &tenant(&acme, Mode::Test), "Slow").await;

    drive_until(&app, "third attempt", || receiver.count() >= 3).await;
    settle(&app).await;
    let paths: Vec<String> = receiver.hits().iter().map(|h| h.path.clone()).collect();
    assert_eq!(paths, ["/", "/", "/"], "the redirect is not followed");

    let log = deliveries(&app, &acme.key, &webhook).await;
    assert_eq!(log[0]["status"], "delivered");
    let attempts = log[0]["attempts"].as_array().expect("attempts");
    assert_eq!(attempts.len(), 3);
    assert!(attempts[0]["responseStatus"].is_null());
    let error = attempts[0]["error"].as_str().expect("timeout error");
    assert!(error.contains("no response within"), "{error}");
    assert_eq!(attempts[1]["responseStatus"], 302);
    assert_eq!(attempts[1]["success"], false);
    assert_eq!(attempts[2]["responseStatus"], 204);
    assert_eq!(attempts[2]["success"], true);
}

async fn killed_worker_means_redelivery_after_the_lease(backend: Backend) {
    // Lease = 2 x timeout + 5 s.
    let app = TestApp::spawn_with(backend, |c| {
        support::fast_retries(c);
        c.webhook_timeout = Duration::from_secs(2);
    })
    .await;
    let acme = app.company().await;
    let receiver = Receiver::start(|n| {
        if n == 1 {
            Reply::Hang
        } else {
            Reply::Status(200)
        }
    })
    .await;
    let (webhook, _) = create_webhook(&app, &acme.key, &receiver.url("/"), &["user.created"]).await;
    create_user(&app, &tenant(&acme, Mode::Test), "Crash").await;

    // A worker claims the delivery, sends it, and dies before recording
    // anything (the task is dropped mid-request).
    let state = app.state.clone();
    let worker = tokio::spawn(async move {
        supportdesk::outbox::run_due(&state.jobs, &state.db, &state.clock).await
    });
    eventually_within("the first attempt sent", DELIVERED_WITHIN, || async {
        receiver.count() > 0
    })
    .await;
    worker.abort();
    let _ = worker.await;

    // While the lease holds, no other worker takes it.
    supportdesk::outbox::run_due(&app.state.jobs, &app.state.db, &app.state.clock).await;
    assert_eq!(receiver.count(), 1);
    let log = deliveries(&app, &acme.key, &webhook).await;
    assert_eq!(log[0]["status"], "pending");

    // After the lease, it is delivered again: same delivery, same attempt.
    drive_until(&app, "redelivery after the lease", || receiver.count() >= 2).await;
    let hits = receiver.hits();
    assert_eq!(
        hits[1].header("x-service-delivery"),
        hits[0].header("x-service-delivery")
    );
    assert_eq!(hits[1].header("x-service-attempt"), "1");
    assert_eq!(hits[1].body, hits[0].body);
    let key = acme.key.clone();
    drive_until_api(&app, "delivered", || {
        let (app, key, webhook) = (&app, key.clone(), webhook.clone());
        async move { deliveries(app, &key, &webhook).await[0]["status"] == "delivered" }
    })
    .await;
    settle(&app).await;
    assert_eq!(receiver.count(), 2);
}

async fn rolled_back_change_delivers_nothing(backend: Backend) {
    let app = TestApp::spawn_with(backend, support::fast_retries).await;
    let acme = app.company().await;
    let receiver = Receiver::always(200).await;
    create_webhook(&app, &acme.key, &receiver.url("/"), &["ticket.created"]).await;
    let tenant = tenant(&acme, Mode::Test);

    let mut tx = app.state.db.begin().await.expect("begin");
    supportdesk::events::emit_json(
        &mut tx,
        &tenant,
        EventName::TicketCreated,
        &json!({"subject": "rolled back"}),
        app.state.clock.now(),
    )
    .await
    .expect("emit");
    drop(tx); // rolled back

    let mut tx = app.state.db.begin().await.expect("begin");
    supportdesk::events::emit_json(
        &mut tx,
        &tenant,
        EventName::TicketCreated,
        &json!({"subject": "committed"}),
        app.state.clock.now(),
    )
    .await
    .expect("emit");
    tx.commit().await.expect("commit");

    drive_until(&app, "the committed event", || receiver.count() >= 1).await;
    settle(&app).await;
    let hits = receiver.hits();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].json()["data"]["subject"], "committed");
}

async fn gone_disables_at_once_and_a_day_of_failures_disables(backend: Backend) {
    let app = TestApp::spawn_with(backend, support::fast_retries).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let tenant = tenant(&acme, Mode::Test);

    // 410: one attempt, the delivery fails, the webhook is disabled.
    let gone = Receiver::always(410).await;
    let (gone_id, _) = create_webhook(&app, key, &gone.url("/"), &["user.created"]).await;
    create_user(&app, &tenant, "Gone").await;
    drive_until(&app, "410 answered", || gone.count() >= 1).await;
    settle(&app).await;
    assert_eq!(gone.count(), 1);
    let webhook = app.get(&format!("/company/webhooks/{gone_id}"), key).await;
    let webhook = webhook.assert_status(200);
    assert_eq!(webhook["isActive"], false);
    assert!(
        webhook["disabledReason"]
            .as_str()
            .expect("reason")
            .contains("410")
    );
    let log = deliveries(&app, key, &gone_id).await;
    assert_eq!(log[0]["status"], "failed");
    assert_eq!(log[0]["attemptCount"], 1);
    // Disabled: later events are not queued for it.
    create_user(&app, &tenant, "After").await;
    settle(&app).await;
    assert_eq!(gone.count(), 1);
    assert_eq!(deliveries(&app, key, &gone_id).await.len(), 1);
    // Re-enabling clears the reason.
    let r = app
        .patch(
            &format!("/company/webhooks/{gone_id}"),
            key,
            json!({"isActive": true}),
        )
        .await;
    assert!(r.assert_status(200)["disabledReason"].is_null());
    app.patch(
        &format!("/company/webhooks/{gone_id}"),
        key,
        json!({"isActive": false}),
    )
    .await
    .assert_status(200);

    // Failing for 24 hours: the run started a day ago; one more failure
    // disables the webhook.
    let failing = Receiver::always(500).await;
    let (failing_id, _) = create_webhook(&app, key, &failing.url("/"), &["user.created"]).await;
    create_user(&app, &tenant, "First failure").await;
    drive_until(&app, "first failure", || failing.count() >= 1).await;
    let id: uuid::Uuid = failing_id.parse().expect("uuid");
    let day_ago = supportdesk::time::Timestamp::from_datetime(
        chrono::Utc::now() - chrono::Duration::hours(25),
    );
    supportdesk::on_db!(&app.state.db, c => sqlx::query(
        "UPDATE webhooks SET failing_since = $1 WHERE id = $2")
        .bind(day_ago).bind(id).execute(c).await.expect("backdate").rows_affected());
    drive_until(&app, "next failure", || failing.count() >= 2).await;
    settle(&app).await;
    let webhook = app
        .get(&format!("/company/webhooks/{failing_id}"), key)
        .await;
    let webhook = webhook.assert_status(200);
    assert_eq!(webhook["isActive"], false);
    assert!(
        webhook["disabledReason"]
            .as_str()
            .expect("reason")
            .contains("24 hours")
    );
    // Its pending delivery is not attempted any more.
    assert_eq!(failing.count(), 2);
    let log = deliveries(&app, key, &failing_id).await;
    assert_eq!(log[0]["status"], "failed");
}

async fn test_ping_and_manual_redelivery(backend: Backend) {
    let app = TestApp::spawn_with(backend, support::fast_retries).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let receiver = Receiver::always(200).await;
    // Subscribed to something else: the ping is sent anyway.
    let (id, secret) = create_webhook(&app, key, &receiver.url("/"), &["ticket.resolved"]).await;

    let r = app
        .post(&format!("/company/webhooks/{id}/test"), key, json!({}))
        .await;
    let ping = r.assert_status(202).clone();
    assert_eq!(ping["event"], "webhook.test");
    assert_eq!(ping["status"], "pending");
    assert_eq!(ping["payload"]["data"]["webhookId"], id.as_str());
    drive_until(&app, "ping", || receiver.count() == 1).await;
    let first = receiver.hits()[0].clone();
    assert_eq!(first.header("x-service-event"), "webhook.test");
    assert_eq!(
        first.header("x-service-delivery"),
        ping["id"].as_str().expect("id")
    );
    assert!(support::service_signature_valid(
        &secret,
        &first.body,
        first.header("x-service-signature")
    ));

    let ping_id = ping["id"].as_str().expect("id");
    let r = app
        .post(
            &format!("/company/webhooks/{id}/deliveries/{ping_id}/redeliver"),
            key,
            json!({}),
        )
        .await;
    let again = r.assert_status(202).clone();
    assert_ne!(again["id"], ping["id"]);
    assert_eq!(again["redeliveryOf"], ping["id"]);
    assert_eq!(again["eventId"], ping["eventId"]);
    drive_until(&app, "redelivery", || receiver.count() == 2).await;
    let second = receiver.hits()[1].clone();
    assert_eq!(second.body, first.body, "the same event body");
    assert_eq!(
        second.header("x-service-delivery"),
        again["id"].as_str().expect("id")
    );

    let one = app
        .get(&format!("/company/webhooks/{id}/deliveries/{ping_id}"), key)
        .await;
    let one = one.assert_status(200);
    assert_eq!(one["status"], "delivered");
    assert_eq!(one["payload"]["event"], "webhook.test");
    let r = app
        .get(&format!("/company/webhooks/{id}/deliveries?limit=1"), key)
        .await;
    let page = r.assert_status(200);
    assert_eq!(page["total"], 2);
    assert_eq!(page["data"].as_array().expect("data").len(), 1);
    assert_eq!(page["data"][0]["id"], again["id"], "newest first");

    let unknown = uuid::Uuid::now_v7();
    app.post(
        &format!("/company/webhooks/{id}/deliveries/{unknown}/redeliver"),
        key,
        json!({}),
    )
    .await
    .assert_error(404, "not_found");
    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    app.post(
        &format!("/company/webhooks/{id}/deliveries/{ping_id}/redeliver"),
        &live,
        json!({}),
    )
    .await
    .assert_error(404, "not_found");

    app.patch(
        &format!("/company/webhooks/{id}"),
        key,
        json!({"isActive": false}),
    )
    .await
    .assert_status(200);
    app.post(&format!("/company/webhooks/{id}/test"), key, json!({}))
        .await
        .assert_error(409, "conflict");
}

async fn a_hanging_endpoint_does_not_hold_up_others(backend: Backend) {
    // The background worker keeps other deliveries moving while one
    // endpoint hangs (it holds one slot, not the whole worker).
    let app = TestApp::spawn_with(backend, |c| c.webhook_timeout = Duration::from_secs(60)).await;
    let acme = app.company().await;
    let slow = Receiver::start(|_| Reply::Hang).await;
    let fast = Receiver::always(200).await;
    let tenant = tenant(&acme, Mode::Test);
    create_webhook(&app, &acme.key, &slow.url("/"), &["ticket.created"]).await;
    create_webhook(&app, &acme.key, &fast.url("/"), &["user.created"]).await;

    let mut tx = app.state.db.begin().await.expect("begin");
    supportdesk::events::emit_json(
        &mut tx,
        &tenant,
        EventName::TicketCreated,
        &json!({"subject": "slow"}),
        app.state.clock.now(),
    )
    .await
    .expect("emit");
    tx.commit().await.expect("commit");
    eventually_within("a call to the slow endpoint", DELIVERED_WITHIN, || async {
        slow.count() > 0
    })
    .await;

    // Well before the hanging call times out (60 s) and frees its slot.
    create_user(&app, &tenant, "Fast").await;
    eventually_within(
        "the other delivery, while the hanging endpoint holds its call",
        DELIVERED_WITHIN,
        || async { fast.count() > 0 },
    )
    .await;
    assert_eq!(slow.count(), 1);
}
