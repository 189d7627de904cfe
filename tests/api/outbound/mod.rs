//! Outbound: the webhooks API, signed deliveries with retries and a
//! delivery log, the SSRF guard, the durable outbox and email.

mod clock_skew;
mod concurrency;
mod delivery;
mod mail;
mod queue;
mod retention;
mod ssrf;
pub(crate) mod support;

use serde_json::json;
use supportdesk::auth::{Mode, Scope, ScopeSet};

use crate::backend_tests;
use crate::support::{Backend, TestApp};
use support::{Receiver, create_webhook};

backend_tests!(
    webhooks_are_created_listed_updated_and_deleted,
    webhook_input_is_validated,
    webhooks_are_scoped_to_company_and_mode,
    secret_rotation_keeps_the_old_secret_for_the_grace_period,
);

async fn webhooks_are_created_listed_updated_and_deleted(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let key = acme.key.as_str();

    let r = app
        .post(
            "/company/webhooks",
            key,
            json!({"name": " Orders ", "url": "https://hooks.example.com/in",
                   "events": ["ticket.created", "user.created", "ticket.created"]}),
        )
        .await;
    let created = r.assert_status(201).clone();
    let id = created["id"].as_str().expect("id");
    assert_eq!(created["name"], "Orders");
    assert_eq!(created["url"], "https://hooks.example.com/in");
    assert_eq!(created["events"], json!(["ticket.created", "user.created"]));
    assert_eq!(created["isActive"], true);
    assert!(
        created["secret"]
            .as_str()
            .expect("secret")
            .starts_with("whsec_")
    );
    assert!(
        created["createdAt"]
            .as_str()
            .expect("createdAt")
            .ends_with('Z')
    );

    // The secret is shown once.
    let got = app.get(&format!("/company/webhooks/{id}"), key).await;
    let got = got.assert_status(200);
    assert_eq!(got["id"], id);
    assert!(got.get("secret").is_none(), "secret leaked: {got}");

    let list = app.get("/company/webhooks", key).await;
    let list = list.assert_status(200);
    assert_eq!(list["total"], 1);
    assert_eq!(list["limit"], 20);
    assert_eq!(list["data"][0]["id"], id);
    assert!(list["data"][0].get("secret").is_none());

    let r = app
        .patch(
            &format!("/company/webhooks/{id}"),
            key,
            json!({"name": "Renamed", "events": ["comment.created"], "isActive": false}),
        )
        .await;
    let updated = r.assert_status(200);
    assert_eq!(updated["name"], "Renamed");
    assert_eq!(updated["events"], json!(["comment.created"]));
    assert_eq!(updated["isActive"], false);
    assert_eq!(updated["url"], "https://hooks.example.com/in");

    app.patch(&format!("/company/webhooks/{id}"), key, json!({}))
        .await
        .assert_error(400, "validation_failed");

    let r = app.delete(&format!("/company/webhooks/{id}"), key).await;
    assert_eq!(r.assert_status(200)["deleted"], true);
    app.get(&format!("/company/webhooks/{id}"), key)
        .await
        .assert_error(404, "not_found");
    app.delete(&format!("/company/webhooks/{id}"), key)
        .await
        .assert_error(404, "not_found");
    app.get("/company/webhooks/not-a-uuid", key)
        .await
        .assert_error(404, "not_found");

    // Scopes: settings:read lists, settings:write is needed to change.
    let reader = app
        .key(
            acme.company.id,
            Mode::Test,
            ScopeSet::from_scopes([Scope::SettingsRead]),
        )
        .await;
    app.get("/company/webhooks", &reader)
        .await
        .assert_status(200);
    let r = app
        .post(
            "/company/webhooks",
            &reader,
            json!({"name": "x", "url": "https://a.example.com", "events": ["user.created"]}),
        )
        .await;
    r.assert_error(403, "insufficient_scope");
    assert_eq!(
        r.body["error"],
        "Missing required permission: settings:write"
    );
}

async fn webhook_input_is_validated(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let long_url = format!("https://example.com/{}", "a".repeat(2048));
    let cases = [
        (
            json!({"url": "https://a.example.com", "events": ["user.created"]}),
            "name",
        ),
        (
            json!({"name": "  ", "url": "https://a.example.com", "events": ["user.created"]}),
            "name",
        ),
        (json!({"name": "x", "events": ["user.created"]}), "url"),
        (
            json!({"name": "x", "url": "/relative", "events": ["user.created"]}),
            "url",
        ),
        (
            json!({"name": "x", "url": "ftp://a.example.com/", "events": ["user.created"]}),
            "url",
        ),
        (
            json!({"name": "x", "url": "not a url", "events": ["user.created"]}),
            "url",
        ),
        (
            json!({"name": "x", "url": long_url, "events": ["user.created"]}),
            "url",
        ),
        (
            json!({"name": "x", "url": "https://a.example.com"}),
            "events",
        ),
        (
            json!({"name": "x", "url": "https://a.example.com", "events": []}),
            "events",
        ),
        (
            json!({"name": "x", "url": "https://a.example.com", "events": ["ticket.exploded"]}),
            "events",
        ),
        (
            json!({"name": "x", "url": "https://a.example.com", "events": "user.created"}),
            "events",
        ),
        (
            json!({"name": "x", "url": "https://a.example.com", "events": [3]}),
            "events",
        ),
    ];
    for (body, field) in cases {
        let r = app.post("/company/webhooks", key, body.clone()).await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.body["details"][0]["field"], field, "for {body}");
    }
    // Every problem is listed at once.
    let r = app.post("/company/webhooks", key, json!({})).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.body["details"].as_array().expect("details").len(), 3);
    assert_eq!(
        app.get("/company/webhooks", key).await.assert_status(200)["total"],
        0
    );
    // Every documented event is accepted.
    let all = supportdesk::events::EVENT_NAMES;
    let r = app
        .post(
            "/company/webhooks",
            key,
            json!({"name": "All", "url": "http://hooks.example.com:8080/x?y=1", "events": all}),
        )
        .await;
    assert_eq!(r.assert_status(201)["events"], json!(all));
}

async fn webhooks_are_scoped_to_company_and_mode(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.run_workers = false).await;
    let acme = app.company().await;
    let other = app.company().await;
    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    let (id, _) =
        create_webhook(&app, &acme.key, "https://a.example.com/", &["user.created"]).await;

    for key in [&live, &other.key] {
        let path = format!("/company/webhooks/{id}");
        app.get(&path, key).await.assert_error(404, "not_found");
        app.patch(&path, key, json!({"name": "x"}))
            .await
            .assert_error(404, "not_found");
        app.delete(&path, key).await.assert_error(404, "not_found");
        app.post(&format!("{path}/rotate-secret"), key, json!({}))
            .await
            .assert_error(404, "not_found");
        app.post(&format!("{path}/test"), key, json!({}))
            .await
            .assert_error(404, "not_found");
        app.get(&format!("{path}/deliveries"), key)
            .await
            .assert_error(404, "not_found");
        assert_eq!(
            app.get("/company/webhooks", key).await.assert_status(200)["total"],
            0
        );
    }
}

async fn secret_rotation_keeps_the_old_secret_for_the_grace_period(backend: Backend) {
    let app = TestApp::spawn_with(backend, support::fast_retries).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let receiver = Receiver::always(200).await;
    let (id, old) = create_webhook(&app, key, &receiver.url("/"), &["user.created"]).await;

    // No body: the default grace period of 24 hours.
    let r = app
        .api(
            reqwest::Method::POST,
            &format!("/company/webhooks/{id}/rotate-secret"),
            Some(key),
        )
        .send()
        .await;
    let r = crate::support::TestResponse::from(r).await;
    let rotated = r.assert_status(200).clone();
    let new = rotated["secret"].as_str().expect("secret").to_string();
    assert!(new.starts_with("whsec_") && new != old);
    assert!(rotated["previousSecretExpiresAt"].is_string());

    app.post(&format!("/company/webhooks/{id}/test"), key, json!({}))
        .await
        .assert_status(202);
    support::drive_until(&app, "ping after rotation", || receiver.count() == 1).await;
    let hit = &receiver.hits()[0];
    let signatures: Vec<&str> = hit.header("webhook-signature").split(' ').collect();
    assert_eq!(
        signatures.len(),
        2,
        "both secrets sign during the grace period"
    );
    assert!(support::standard_signature_valid(&new, hit));
    assert!(support::standard_signature_valid(&old, hit));
    assert!(support::service_signature_valid(
        &new,
        &hit.body,
        hit.header("x-service-signature")
    ));

    // A leaked secret: grace 0 ends the old one at once.
    let r = app
        .post(
            &format!("/company/webhooks/{id}/rotate-secret"),
            key,
            json!({"gracePeriodSeconds": 0}),
        )
        .await;
    let rotated = r.assert_status(200).clone();
    assert!(rotated["previousSecretExpiresAt"].is_null());
    let newest = rotated["secret"].as_str().expect("secret").to_string();
    app.post(&format!("/company/webhooks/{id}/test"), key, json!({}))
        .await
        .assert_status(202);
    support::drive_until(&app, "second ping", || receiver.count() == 2).await;
    let hit = &receiver.hits()[1];
    assert_eq!(hit.header("webhook-signature").split(' ').count(), 1);
    assert!(support::standard_signature_valid(&newest, hit));
    assert!(!support::standard_signature_valid(&new, hit));

    for bad in [
        json!({"gracePeriodSeconds": -1}),
        json!({"gracePeriodSeconds": "x"}),
        json!({"gracePeriodSeconds": 9_999_999}),
    ] {
        app.post(&format!("/company/webhooks/{id}/rotate-secret"), key, bad)
            .await
            .assert_error(400, "validation_failed");
    }
}
