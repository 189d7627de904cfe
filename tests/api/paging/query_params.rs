//! Query strings: a parameter an operation does not document is refused
//! (400 naming it) instead of ignored, on every route; the list filters
//! that each add a condition (`tag`, `anyTag`, `cf.<key>`) are capped.

use reqwest::Method;
use serde_json::{Value, json};
use supportdesk::query_params::FILTER_VALUES_MAX;
use uuid::Uuid;

use crate::backend_tests;
use crate::support::{Backend, TestApp, TestResponse, assert_invalid};

backend_tests!(
    every_route_refuses_a_query_parameter_it_does_not_document,
    a_misspelt_list_filter_is_refused_not_ignored,
    list_filters_over_the_limit_are_refused_naming_it,
);

/// `path` of the route table with each `{param}` an id that exists nowhere:
/// the query string is checked before the handler looks anything up.
fn concrete(path: &str) -> String {
    path.split('/')
        .map(|segment| {
            if segment.starts_with('{') {
                Uuid::now_v7().to_string()
            } else {
                segment.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

async fn every_route_refuses_a_query_parameter_it_does_not_document(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    for spec in supportdesk::app::api_route_specs() {
        let method = Method::from_bytes(spec.method.as_str().as_bytes()).expect("method");
        let path = format!("{}?notAParameter=1", concrete(&spec.path));
        let mut request = app.api(method.clone(), &path, Some(&acme.key));
        if [Method::POST, Method::PUT, Method::PATCH].contains(&method) {
            request = request.json(&json!({}));
        }
        let r = TestResponse::from(request.send().await).await;
        assert_eq!(
            (r.status, r.body["details"][0]["field"].as_str()),
            (400, Some("notAParameter")),
            "{} {}: {}",
            spec.method,
            spec.path,
            r.text
        );
    }
}

/// `?assignee=` for `assignedToId` used to list every ticket: now the
/// answer names the parameter and what the list takes instead.
async fn a_misspelt_list_filter_is_refused_not_ignored(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = app
        .get(
            &format!("/tickets?assignee={}&status=OPEN", Uuid::now_v7()),
            &acme.key,
        )
        .await;
    assert_invalid(&r, &["assignee"]);
    let message = r.body["details"][0]["message"].as_str().expect("message");
    assert!(
        message.starts_with("unknown query parameter; this operation takes ")
            && message.contains("assignedToId")
            && message.contains("cf.{key}"),
        "{message}"
    );
}

/// Every list that documents the tag and custom field filters: one value
/// over the limit is a 400 naming the parameter and the limit; the limit
/// itself is served.
async fn list_filters_over_the_limit_are_refused_naming_it(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let doc = serde_json::to_value(supportdesk::app::openapi_document()).expect("document");
    let filtered: Vec<String> = doc["paths"]
        .as_object()
        .expect("paths")
        .iter()
        .filter(|(_, item)| documents(&item["get"], "tag") && documents(&item["get"], "cf.{key}"))
        .map(|(path, _)| path.trim_start_matches("/api/v1").to_string())
        .collect();
    assert!(filtered.contains(&"/tickets".to_string()), "{filtered:?}");
    let tags = |n: usize| {
        (0..n)
            .map(|i| format!("t{i}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    let conditions = |n: usize| {
        (0..n)
            .map(|i| format!("cf.f{i}=1"))
            .collect::<Vec<_>>()
            .join("&")
    };
    let over = FILTER_VALUES_MAX + 1;
    for path in &filtered {
        for (query, field, what) in [
            (format!("tag={}", tags(over)), "tag", "values"),
            (format!("anyTag={}", tags(over)), "anyTag", "values"),
            (conditions(over), "cf.{key}", "conditions"),
        ] {
            let r = app.get(&format!("{path}?{query}"), &acme.key).await;
            assert_invalid(&r, &[field]);
            assert_eq!(
                r.body["error"],
                format!("{field}: too many {what}: {over} given, the limit is 20"),
                "{path}?{query}"
            );
        }
        let at_limit = format!("{path}?tag={}", tags(FILTER_VALUES_MAX));
        app.get(&at_limit, &acme.key).await.assert_status(200);
    }
}

/// Whether `operation` documents the query parameter `name`.
fn documents(operation: &Value, name: &str) -> bool {
    operation["parameters"].as_array().is_some_and(|params| {
        params
            .iter()
            .any(|p| p["name"] == name && p["in"] == "query")
    })
}
