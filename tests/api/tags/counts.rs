//! `GET /tags`: the company's tags in the key's mode, with open and total
//! counts, most used first, by prefix, limited.

use super::*;
use supportdesk::auth::{Mode, ScopeSet};

backend_tests!(
    tag_list_counts_open_and_total_records,
    tag_list_prefix_and_limit
);

async fn tag_list_counts_open_and_total_records(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let other = app.company().await;
    ticket(&app, &acme, json!({"tags": ["vip", "billing"]})).await;
    ticket(&app, &acme, json!({"tags": ["vip"]})).await;
    let resolved = ticket(&app, &acme, json!({"tags": ["vip", "billing"]})).await;
    app.patch(
        &format!("/tickets/{}", id_of(&resolved)),
        &acme.key,
        json!({"status": "RESOLVED"}),
    )
    .await
    .assert_status(200);
    ticket(&app, &acme, json!({"tags": ["aaa"]})).await;
    ticket(&app, &other, json!({"tags": ["vip", "foreign"]})).await;
    let live = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    app.post(
        "/tickets",
        &live,
        json!({"subject": "Live", "entityId": acme.entity.id, "tags": ["live-only"]}),
    )
    .await
    .assert_status(201);

    let r = app.get("/tags", &acme.key).await;
    assert_eq!(
        r.assert_status(200)["data"],
        json!([
            {"tag": "vip", "open": 2, "total": 3},
            {"tag": "billing", "open": 1, "total": 2},
            {"tag": "aaa", "open": 1, "total": 1},
        ])
    );
}

async fn tag_list_prefix_and_limit(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    ticket(
        &app,
        &acme,
        json!({"tags": ["plan:pro", "plan_x", "planb", "vip"]}),
    )
    .await;
    ticket(&app, &acme, json!({"tags": ["planb", "planxy"]})).await;

    let names = |r: &TestResponse| -> Vec<String> {
        r.assert_status(200)["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(|t| t["tag"].as_str().expect("tag").to_string())
            .collect()
    };
    let r = app.get("/tags?prefix=PLAN", &acme.key).await;
    assert_eq!(names(&r), ["planb", "plan:pro", "plan_x", "planxy"]);
    // `_` is a tag character, not a wildcard.
    let r = app.get("/tags?prefix=plan_", &acme.key).await;
    assert_eq!(names(&r), ["plan_x"]);
    let r = app.get("/tags?prefix=plan&limit=2", &acme.key).await;
    assert_eq!(names(&r), ["planb", "plan:pro"]);
    let r = app.get("/tags?prefix=no%20way", &acme.key).await;
    assert_invalid(&r, &["prefix"]);
}
