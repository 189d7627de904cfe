//! The widget's public operations in the OpenAPI document: listed with
//! their full paths, the visitor token as their security scheme, the widget
//! key where they take one, and the per-IP limit's 429.

use std::collections::BTreeSet;

use reqwest::Method;
use serde_json::Value;

use crate::backend_tests;
use crate::support::{Backend, TestApp, TestResponse};

backend_tests!(the_served_document_lists_every_widget_operation);

fn document() -> Value {
    serde_json::to_value(supportdesk::app::openapi_document()).expect("serialises")
}

/// The operations whose path is not under /api/v1, as (METHOD, path).
fn public_operations(doc: &Value) -> BTreeSet<(String, String)> {
    doc["paths"]
        .as_object()
        .expect("paths")
        .iter()
        .filter(|(path, _)| !path.starts_with("/api/v1/"))
        .flat_map(|(path, item)| {
            let methods = item.as_object().expect("path item").keys();
            methods.map(move |method| (method.to_ascii_uppercase(), path.clone()))
        })
        .collect()
}

async fn the_served_document_lists_every_widget_operation(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let served = TestResponse::from(app.api(Method::GET, "/openapi.json", None).send().await).await;
    let expected: BTreeSet<(String, String)> = [
        ("GET", "/widget.js"),
        ("GET", "/widget/frame.html"),
        ("POST", "/widget/v1/sessions"),
        ("GET", "/widget/v1/sessions"),
        ("GET", "/widget/v1/sessions/{id}"),
        ("POST", "/widget/v1/attachments"),
        ("GET", "/widget/v1/presence"),
        ("GET", "/widget/v1/kb/search"),
        ("GET", "/widget/v1/kb/articles/{id}"),
        ("GET", "/widget/v1/kb/suggest"),
        ("POST", "/widget/v1/kb/answered"),
        ("GET", "/widget/v1/confirm-email"),
        ("POST", "/widget/v1/ratings"),
        ("GET", "/widget/v1/rate"),
        ("POST", "/widget/v1/tokens/refresh"),
        ("POST", "/widget/v1/tokens/exchange"),
    ]
    .into_iter()
    .map(|(method, path)| (method.to_string(), path.to_string()))
    .collect();
    assert_eq!(public_operations(served.assert_status(200)), expected);
}

#[test]
fn every_widget_api_operation_documents_the_per_ip_429() {
    let doc = document();
    let operations = public_operations(&doc);
    let api: Vec<_> = operations
        .iter()
        .filter(|(_, path)| path.starts_with("/widget/v1/"))
        .collect();
    assert!(!api.is_empty());
    for (method, path) in api {
        let limited = &doc["paths"][path][method.to_ascii_lowercase()]["responses"]["429"];
        assert!(
            limited["headers"]["Retry-After"].is_object(),
            "{method} {path} documents 429 with Retry-After"
        );
    }
}

#[test]
fn the_visitor_token_is_a_bearer_scheme_required_where_a_chat_is_opened() {
    let doc = document();
    let scheme = &doc["components"]["securitySchemes"]["VisitorToken"];
    assert_eq!(
        (&scheme["type"], &scheme["scheme"]),
        (&"http".into(), &"bearer".into())
    );
    for (method, path) in [
        ("get", "/widget/v1/sessions"),
        ("get", "/widget/v1/sessions/{id}"),
        ("post", "/widget/v1/attachments"),
    ] {
        let security = &doc["paths"][path][method]["security"];
        assert_eq!(
            security,
            &serde_json::json!([{"VisitorToken": []}]),
            "{method} {path}"
        );
    }
}

#[test]
fn the_widget_key_is_required_where_an_operation_takes_one() {
    let doc = document();
    for path in [
        "/widget/v1/presence",
        "/widget/v1/kb/search",
        "/widget/v1/kb/suggest",
        "/widget/v1/kb/articles/{id}",
    ] {
        let parameters = doc["paths"][path]["get"]["parameters"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(
            parameters
                .iter()
                .any(|p| p["name"] == "widgetKey" && p["in"] == "query" && p["required"] == true),
            "GET {path} takes widgetKey"
        );
    }
    let body = &doc["paths"]["/widget/v1/sessions"]["post"]["requestBody"]["content"]["application/json"]
        ["schema"]["$ref"];
    let name = body
        .as_str()
        .and_then(|r| r.rsplit('/').next())
        .expect("a schema reference");
    let required = &doc["components"]["schemas"][name]["required"];
    assert!(
        required
            .as_array()
            .is_some_and(|r| r.iter().any(|f| f == "widgetKey")),
        "{name} requires widgetKey: {required}"
    );
}

/// Every widget POST takes an `Idempotency-Key` (a visitor on a flaky
/// network retries), and the document says so as on every API POST.
#[test]
fn every_widget_post_documents_the_idempotency_key() {
    let doc = document();
    let posts: Vec<(String, String)> = public_operations(&doc)
        .into_iter()
        .filter(|(method, path)| method == "POST" && path.starts_with("/widget/v1/"))
        .collect();
    assert_eq!(posts.len(), 6, "{posts:?}");
    for (_, path) in posts {
        let operation = &doc["paths"][&path]["post"];
        let takes_key = operation["parameters"].as_array().is_some_and(|params| {
            params
                .iter()
                .any(|p| p["name"] == "Idempotency-Key" && p["in"] == "header")
        });
        assert!(takes_key, "POST {path} documents Idempotency-Key");
        assert!(
            operation["responses"]["422"].is_object(),
            "POST {path} documents a reused key"
        );
    }
}
