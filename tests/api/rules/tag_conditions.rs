//! Escalation rule conditions on tags: `tags` (all of) and `anyTags` (at
//! least one), normalised and validated like the tags of a ticket.

use serde_json::json;

use super::{assert_invalid, escalated_events, put_rules, run_pass, ticket, user};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

backend_tests!(
    a_tags_condition_fires_only_for_tickets_carrying_every_tag,
    an_any_tags_condition_fires_for_tickets_carrying_one_of_them,
    tag_conditions_are_normalised,
    bad_tag_conditions_are_refused,
);

/// Schedulers off: tests run the passes themselves.
async fn quiet(backend: Backend) -> TestApp {
    TestApp::spawn_with(backend, |c| c.run_workers = false).await
}

async fn a_tags_condition_fires_only_for_tickets_carrying_every_tag(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let both = ticket(
        &app,
        &acme,
        json!({"subject": "A", "tags": ["vip", "billing", "eu"]}),
    )
    .await;
    let vip_only = ticket(&app, &acme, json!({"subject": "B", "tags": ["vip"]})).await;
    let untagged = ticket(&app, &acme, json!({"subject": "C"})).await;
    put_rules(
        &app,
        &acme.key,
        json!([{"name": "VIP billing", "conditions": {"tags": ["vip", "billing"]},
                "action": {"escalateToId": bob.id}}]),
    )
    .await;

    assert_eq!(run_pass(&app).await, 1);
    assert_eq!(escalated_events(&app, &both).await.len(), 1);
    assert!(escalated_events(&app, &vip_only).await.is_empty());
    assert!(escalated_events(&app, &untagged).await.is_empty());
}

async fn an_any_tags_condition_fires_for_tickets_carrying_one_of_them(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let vip = ticket(&app, &acme, json!({"subject": "A", "tags": ["vip"]})).await;
    let both = ticket(
        &app,
        &acme,
        json!({"subject": "B", "tags": ["vip", "billing"]}),
    )
    .await;
    let other = ticket(&app, &acme, json!({"subject": "C", "tags": ["eu"]})).await;
    let untagged = ticket(&app, &acme, json!({"subject": "D"})).await;
    put_rules(
        &app,
        &acme.key,
        json!([{"name": "VIP or billing", "conditions": {"anyTags": ["vip", "billing"]},
                "action": {"escalateToId": bob.id}}]),
    )
    .await;

    assert_eq!(run_pass(&app).await, 2);
    assert_eq!(escalated_events(&app, &vip).await.len(), 1);
    assert_eq!(escalated_events(&app, &both).await.len(), 1);
    assert!(escalated_events(&app, &other).await.is_empty());
    assert!(escalated_events(&app, &untagged).await.is_empty());
}

async fn tag_conditions_are_normalised(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let saved = put_rules(
        &app,
        &acme.key,
        json!([{"name": "Tags", "conditions": {"tags": [" VIP ", "billing", "vip"],
                                               "anyTags": ["EU", "us"]},
                "action": {"escalateToId": bob.id}}]),
    )
    .await;
    assert_eq!(saved[0]["conditions"]["tags"], json!(["billing", "vip"]));
    assert_eq!(saved[0]["conditions"]["anyTags"], json!(["eu", "us"]));
}

async fn bad_tag_conditions_are_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let r = app
        .put(
            "/settings/escalation-rules",
            &acme.key,
            json!({"rules": [
                {"name": "Ok", "conditions": {"tags": ["vip"]}, "action": {"escalateToId": bob.id}},
                {"name": "Bad", "conditions": {"tags": ["not a tag"], "anyTags": []},
                 "action": {"escalateToId": bob.id}},
            ]}),
        )
        .await;
    assert_invalid(
        &r,
        &["rules[1].conditions.tags", "rules[1].conditions.anyTags"],
    );
    // Nothing was saved.
    let r = app.get("/settings/escalation-rules", &acme.key).await;
    assert_eq!(r.assert_status(200)["rules"], json!([]));
}
