//! Escalation rule conditions on custom fields (`customFields`), parsed
//! as the `cf.` list filters against the company's ticket fields.

use serde_json::{Value, json};

use super::{assert_invalid, escalated_events, put_rules, run_pass, ticket, user};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};

backend_tests!(
    a_custom_field_equals_condition_fires_only_for_tickets_with_that_value,
    a_custom_field_range_condition_fires_only_for_tickets_in_the_range,
    custom_field_conditions_are_stored_as_parsed,
    bad_custom_field_conditions_are_refused_naming_the_field,
    a_condition_on_a_deleted_field_matches_nothing_and_other_rules_still_fire,
);

/// Schedulers off: tests run the passes themselves.
async fn quiet(backend: Backend) -> TestApp {
    TestApp::spawn_with(backend, |c| c.run_workers = false).await
}

/// `plan` (a select) and `order_total` (a number) on tickets.
async fn define_fields(app: &TestApp, acme: &TestCompany) {
    for body in [
        json!({"key": "plan", "label": "Plan", "type": "select", "appliesTo": ["ticket"],
               "options": ["basic", "pro"]}),
        json!({"key": "order_total", "label": "Total", "type": "number",
               "appliesTo": ["ticket"]}),
    ] {
        app.post("/settings/custom-fields", &acme.key, body)
            .await
            .assert_status(201);
    }
}

async fn with_fields(app: &TestApp, acme: &TestCompany, fields: Value) -> String {
    ticket(app, acme, json!({"subject": "T", "customFields": fields})).await
}

async fn a_custom_field_equals_condition_fires_only_for_tickets_with_that_value(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    define_fields(&app, &acme).await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let pro = with_fields(&app, &acme, json!({"plan": "pro"})).await;
    let basic = with_fields(&app, &acme, json!({"plan": "basic"})).await;
    let none = with_fields(&app, &acme, json!({})).await;
    put_rules(
        &app,
        &acme.key,
        json!([{"name": "Pro", "conditions": {"customFields": {"plan": "pro"}},
                "action": {"escalateToId": bob.id}}]),
    )
    .await;

    assert_eq!(run_pass(&app).await, 1);
    assert_eq!(escalated_events(&app, &pro).await.len(), 1);
    assert!(escalated_events(&app, &basic).await.is_empty());
    assert!(escalated_events(&app, &none).await.is_empty());
}

async fn a_custom_field_range_condition_fires_only_for_tickets_in_the_range(backend: Backend) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    define_fields(&app, &acme).await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let mut inside = Vec::new();
    let mut outside = Vec::new();
    for total in [50.0, 99.99, 100.0, 250.5, 499.99, 500.0, 1200.0] {
        let id = with_fields(&app, &acme, json!({"order_total": total})).await;
        if (100.0..500.0).contains(&total) {
            inside.push(id);
        } else {
            outside.push(id);
        }
    }
    outside.push(with_fields(&app, &acme, json!({"plan": "pro"})).await);
    put_rules(
        &app,
        &acme.key,
        json!([{"name": "Mid-size orders",
                "conditions": {"customFields": {"order_total": {"gte": 100, "lt": 500}}},
                "action": {"escalateToId": bob.id}}]),
    )
    .await;

    assert_eq!(run_pass(&app).await, inside.len());
    for id in &inside {
        assert_eq!(escalated_events(&app, id).await.len(), 1, "{id}");
    }
    for id in &outside {
        assert!(escalated_events(&app, id).await.is_empty(), "{id}");
    }
}

async fn custom_field_conditions_are_stored_as_parsed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    define_fields(&app, &acme).await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let saved = put_rules(
        &app,
        &acme.key,
        json!([{"name": "Fields",
                "conditions": {"customFields": {"plan": "pro",
                                                "order_total": {"gte": "100", "lt": 499.5}}},
                "action": {"escalateToId": bob.id}}]),
    )
    .await;
    assert_eq!(
        saved[0]["conditions"]["customFields"],
        json!({"order_total": {"gte": 100, "lt": 499.5}, "plan": {"eq": "pro"}})
    );
}

async fn bad_custom_field_conditions_are_refused_naming_the_field(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    define_fields(&app, &acme).await;
    let bob = user(&app, acme.company.id, "Bob").await;
    let rule = |fields: Value| {
        json!({"name": "R", "conditions": {"customFields": fields},
               "action": {"escalateToId": bob.id}})
    };
    let r = app
        .put(
            "/settings/escalation-rules",
            &acme.key,
            json!({"rules": [
                rule(json!({"plan": "pro"})),
                rule(json!({"nope": "x"})),
                rule(json!({"plan": "gold"})),
                rule(json!({"order_total": {"gte": "ten"}})),
                rule(json!({"plan": {"gt": "basic"}})),
                rule(json!({})),
            ]}),
        )
        .await;
    assert_invalid(
        &r,
        &[
            "rules[1].conditions.customFields.nope",
            "rules[2].conditions.customFields.plan",
            "rules[3].conditions.customFields.order_total",
            "rules[4].conditions.customFields.plan",
            "rules[5].conditions.customFields",
        ],
    );
    // Nothing was saved.
    let r = app.get("/settings/escalation-rules", &acme.key).await;
    assert_eq!(r.assert_status(200)["rules"], json!([]));
}

async fn a_condition_on_a_deleted_field_matches_nothing_and_other_rules_still_fire(
    backend: Backend,
) {
    let app = quiet(backend).await;
    let acme = app.company().await;
    define_fields(&app, &acme).await;
    let bob = user(&app, acme.company.id, "Bob").await;
    put_rules(
        &app,
        &acme.key,
        json!([
            {"name": "Pro", "conditions": {"customFields": {"plan": "pro"}},
             "action": {"escalateToId": bob.id}},
            {"name": "Big", "conditions": {"customFields": {"order_total": {"gte": 1000}}},
             "action": {"escalateToId": bob.id}},
        ]),
    )
    .await;
    app.delete("/settings/custom-fields/plan", &acme.key)
        .await
        .assert_status(200);
    // Defined again with another type: the stored "pro" is no number.
    app.post(
        "/settings/custom-fields",
        &acme.key,
        json!({"key": "plan", "label": "Plan", "type": "number", "appliesTo": ["ticket"]}),
    )
    .await
    .assert_status(201);
    let numbered = with_fields(&app, &acme, json!({"plan": 1})).await;
    let big = with_fields(&app, &acme, json!({"order_total": 5000})).await;

    assert_eq!(run_pass(&app).await, 1);
    assert_eq!(escalated_events(&app, &big).await.len(), 1);
    assert!(escalated_events(&app, &numbered).await.is_empty());
    // The rule is kept as written, for its owner to fix.
    let r = app.get("/settings/escalation-rules", &acme.key).await;
    assert_eq!(
        r.assert_status(200)["rules"][0]["conditions"]["customFields"],
        json!({"plan": {"eq": "pro"}})
    );
}
