//! The SSRF guard, at creation and at delivery.

use serde_json::json;
use supportdesk::auth::Mode;

use super::support::{
    self, DELIVERED_WITHIN, Receiver, create_user, create_webhook, deliveries, tenant,
};
use crate::backend_tests;
use crate::support::{Backend, TestApp, eventually_within};

backend_tests!(
    private_urls_are_refused_at_creation,
    private_addresses_are_refused_at_delivery,
    the_local_nat64_mapped_and_translated_ranges_are_refused,
    a_refused_url_names_the_setting_that_allows_it,
);

/// A service with the guard on, and a company key.
async fn guarded(backend: Backend) -> (TestApp, String) {
    let app = TestApp::spawn_with(backend, |c| {
        c.run_workers = false;
        c.webhook_allow_private = false;
    })
    .await;
    let key = app.company().await.key;
    (app, key)
}

async fn create(app: &TestApp, key: &str, url: &str) -> crate::support::TestResponse {
    app.post(
        "/company/webhooks",
        key,
        json!({"name": "x", "url": url, "events": ["user.created"]}),
    )
    .await
}

async fn the_local_nat64_mapped_and_translated_ranges_are_refused(backend: Backend) {
    let (app, key) = guarded(backend).await;
    for url in [
        // 64:ff9b:1::/48, local-use NAT64, here embedding 8.8.8.8.
        "http://[64:ff9b:1::808:808]/hook",
        // ::ffff:0:0/96, IPv4-mapped, even of a public address.
        "http://[::ffff:808:808]/hook",
        // ::ffff:0:0:0/96, IPv4-translated.
        "http://[::ffff:0:808:808]/hook",
    ] {
        let r = create(&app, &key, url).await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.body["details"][0]["field"], "url", "for {url}");
    }
    assert_eq!(
        app.get("/company/webhooks", &key).await.assert_status(200)["total"],
        0
    );
}

async fn a_refused_url_names_the_setting_that_allows_it(backend: Backend) {
    let (app, key) = guarded(backend).await;
    let r = create(&app, &key, "http://127.0.0.1:9999/hook").await;
    r.assert_error(400, "validation_failed");
    let message = r.body["details"][0]["message"].as_str().expect("message");
    assert!(
        message.contains("SUPPORTDESK_WEBHOOK_ALLOW_PRIVATE=true"),
        "{message}"
    );
}

async fn private_urls_are_refused_at_creation(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| {
        c.run_workers = false;
        c.webhook_allow_private = false;
    })
    .await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    for url in [
        "http://127.0.0.1/hook",
        "http://127.0.0.1:8080/hook",
        "http://10.0.0.5/hook",
        "http://192.168.1.20/",
        "http://169.254.169.254/latest/meta-data",
        "http://100.64.0.1/",
        "http://0.0.0.0/",
        "http://[::1]/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://[fd00::1]/",
        "http://2130706433/",
        "http://localhost/hook",
        "http://localhost:9999/hook",
    ] {
        let r = app
            .post(
                "/company/webhooks",
                key,
                json!({"name": "x", "url": url, "events": ["user.created"]}),
            )
            .await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.body["details"][0]["field"], "url", "for {url}");
    }
    // A public literal address passes (no DNS needed).
    let (id, _) = create_webhook(&app, key, "http://93.184.215.14/hook", &["user.created"]).await;
    // Updating to a private URL is refused too.
    app.patch(
        &format!("/company/webhooks/{id}"),
        key,
        json!({"url": "http://10.1.1.1/"}),
    )
    .await
    .assert_error(400, "validation_failed");
    assert_eq!(
        app.get("/company/webhooks", key).await.assert_status(200)["total"],
        1
    );
}

async fn private_addresses_are_refused_at_delivery(backend: Backend) {
    // Webhooks saved while the guard was off (as if DNS changed after the
    // check); then a node with the guard on tries to deliver.
    let app = TestApp::spawn_with(backend, support::fast_retries).await;
    let acme = app.company().await;
    let receiver = Receiver::always(200).await;
    let port = receiver.port;
    let urls = [
        format!("http://localhost:{port}/name"),
        format!("http://127.0.0.1:{port}/v4"),
        format!("http://[::ffff:127.0.0.1]:{port}/mapped"),
        format!("http://[::1]:{port}/v6"),
    ];
    let mut webhooks = Vec::new();
    for url in &urls {
        webhooks.push(
            create_webhook(&app, &acme.key, url, &["user.created"])
                .await
                .0,
        );
    }

    let mut config = app.config.clone();
    config.webhook_allow_private = false;
    let guarded = supportdesk::jobs::registry(&config).expect("guarded job handlers");

    create_user(&app, &tenant(&acme, Mode::Test), "Probe").await;
    eventually_within(
        "an attempt at every webhook",
        DELIVERED_WITHIN,
        async || {
            supportdesk::outbox::run_due(&guarded, &app.state.db, &app.state.clock).await;
            let mut attempted = 0;
            for id in &webhooks {
                let log = deliveries(&app, &acme.key, id).await;
                attempted += usize::from(log[0]["attemptCount"].as_i64() >= Some(1));
            }
            attempted == webhooks.len()
        },
    )
    .await;
    assert_eq!(receiver.count(), 0, "nothing reached the private receiver");
    for id in &webhooks {
        let log = deliveries(&app, &acme.key, id).await;
        let attempt = &log[0]["attempts"][0];
        assert_eq!(attempt["success"], false);
        assert!(attempt["responseStatus"].is_null());
        let error = attempt["error"].as_str().expect("error");
        assert!(error.contains("blocked"), "{error}");
    }

    // The same deliveries go through where the guard is off, which shows
    // it was the guard that stopped them.
    support::drive_until(&app, "unguarded delivery", || {
        let paths: Vec<String> = receiver.hits().iter().map(|h| h.path.clone()).collect();
        paths.contains(&"/name".to_string()) && paths.contains(&"/v4".to_string())
    })
    .await;
}
