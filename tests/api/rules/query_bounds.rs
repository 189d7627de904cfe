//! Numbers at and past the ends of `i64` in the pagination and limit
//! parameters of every list endpoint: the largest is served (clamped or an
//! empty page), anything that is not a non-negative `i64` is a 400 naming
//! the parameter, never a 500.

use serde_json::json;

use super::{assert_invalid, ticket};
use crate::backend_tests;
use crate::support::{Backend, TestApp, TestCompany};
use crate::widget::widget_get;

backend_tests!(
    the_largest_limit_and_offset_are_served,
    limits_and_offsets_past_i64_are_refused,
);

/// Every list endpoint of one company, with a ticket and a webhook.
async fn list_paths(app: &TestApp, acme: &TestCompany) -> Vec<String> {
    let ticket = ticket(app, acme, json!({"subject": "Bounds"})).await;
    let r = app
        .post(
            "/company/webhooks",
            &acme.key,
            json!({"name": "Bounds", "url": "https://hooks.example.com/in",
                   "events": ["ticket.created"]}),
        )
        .await;
    let webhook = r.assert_status(201)["id"].as_str().expect("id").to_string();
    vec![
        "/tickets?".into(),
        format!("/tickets/{ticket}/comments?"),
        format!("/tickets/{ticket}/activities?"),
        "/users?".into(),
        "/api-keys?".into(),
        "/chat/sessions?".into(),
        "/kb/articles?".into(),
        "/company/webhooks?".into(),
        format!("/company/webhooks/{webhook}/deliveries?"),
    ]
}

/// The visitor's knowledge-base search with this `limit`.
fn widget_search(acme: &TestCompany, limit: impl std::fmt::Display) -> String {
    let widget = &acme.entity.widget_key_test;
    format!("/widget/v1/kb/search?widgetKey={widget}&q=bounds&limit={limit}")
}

async fn the_largest_limit_and_offset_are_served(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let max = i64::MAX;
    for path in list_paths(&app, &acme).await {
        let r = app
            .get(&format!("{path}limit={max}&offset={max}"), key)
            .await;
        let page = r.assert_status(200);
        assert_eq!(page["offset"], max, "{path}");
        assert_eq!(page["data"], json!([]), "{path}");
    }
    let r = app
        .get(&format!("/kb/search?q=bounds&limit={max}"), key)
        .await;
    assert_eq!(r.assert_status(200), &json!([]));
    let r = widget_get(&app, &widget_search(&acme, max)).await;
    assert_eq!(r.assert_status(200), &json!([]));
}

async fn limits_and_offsets_past_i64_are_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let key = acme.key.as_str();
    let past = "9223372036854775808";
    let below = "-9223372036854775809";
    for path in list_paths(&app, &acme).await {
        for (query, field) in [
            (format!("limit={past}"), "limit"),
            (format!("limit={below}"), "limit"),
            (format!("offset={past}"), "offset"),
            (format!("offset={below}"), "offset"),
            ("offset=-9223372036854775808".to_string(), "offset"),
        ] {
            let r = app.get(&format!("{path}{query}"), key).await;
            assert_invalid(&r, &[field]);
        }
    }
    for limit in [past, below] {
        let r = app
            .get(&format!("/kb/search?q=bounds&limit={limit}"), key)
            .await;
        assert_invalid(&r, &["limit"]);
        let r = widget_get(&app, &widget_search(&acme, limit)).await;
        assert_invalid(&r, &["limit"]);
    }
}
