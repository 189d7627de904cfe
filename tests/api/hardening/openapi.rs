//! The OpenAPI document: complete (every route, nothing else), its scopes
//! taken from the route table, served without a key beside the
//! authenticated API, and Swagger UI served offline.

use std::collections::BTreeSet;

use reqwest::Method;
use serde_json::Value;

use crate::backend_tests;
use crate::support::{Backend, TestApp, TestResponse};

fn document() -> Value {
    serde_json::to_value(supportdesk::app::openapi_document()).expect("serialises")
}

#[test]
fn every_route_has_an_operation_and_every_operation_a_route() {
    let doc = document();
    // The widget's public operations outside /api/v1, and the agent
    // sign-in's and the mail providers' beside the key check, have their
    // own tests.
    let documented: BTreeSet<(String, String)> = doc["paths"]
        .as_object()
        .expect("paths")
        .iter()
        .filter(|(path, _)| {
            path.starts_with("/api/v1/")
                && !path.starts_with("/api/v1/auth/")
                && !path.starts_with("/api/v1/inbound/")
        })
        .flat_map(|(path, item)| {
            let methods = item.as_object().expect("path item").keys();
            methods.map(move |method| (method.to_ascii_uppercase(), path.clone()))
        })
        .collect();
    let routed: BTreeSet<(String, String)> = supportdesk::app::api_route_specs()
        .into_iter()
        .map(|spec| (spec.method.to_string(), format!("/api/v1{}", spec.path)))
        .collect();
    assert_eq!(documented, routed);
}

#[test]
fn every_operation_carries_its_routes_scope_and_the_common_errors() {
    let doc = document();
    assert!(
        doc["openapi"]
            .as_str()
            .is_some_and(|v| v.starts_with("3.1")),
        "OpenAPI 3.1: {}",
        doc["openapi"]
    );
    assert_eq!(
        doc["components"]["securitySchemes"]["ApiKey"]["in"],
        "header"
    );
    assert_eq!(
        doc["components"]["securitySchemes"]["ApiKey"]["name"],
        "X-API-Key"
    );
    let specs = supportdesk::app::api_route_specs();
    assert!(!specs.is_empty());
    for spec in specs {
        let path = format!("/api/v1{}", spec.path);
        let method = spec.method.as_str().to_ascii_lowercase();
        let op = &doc["paths"][&path][&method];
        let scope = spec.scope.as_str();
        assert_eq!(op["x-required-scope"], scope, "{method} {path}");
        assert_eq!(op["security"][0]["ApiKey"][0], scope, "{method} {path}");
        assert!(
            op["description"]
                .as_str()
                .is_some_and(|d| d.contains(&format!("`{scope}`"))),
            "{method} {path} description names its scope"
        );
        for status in ["401", "403", "429", "500"] {
            let error = &op["responses"][status]["content"]["application/json"]["schema"]["$ref"];
            assert_eq!(
                error, "#/components/schemas/ErrorBody",
                "{method} {path} documents {status}"
            );
        }
        if spec.path.contains('{') {
            assert!(
                op["responses"]["404"].is_object(),
                "{method} {path} documents 404"
            );
        }
        let success = op["responses"]
            .as_object()
            .and_then(|r| r.iter().find(|(s, _)| s.starts_with('2')))
            .map(|(_, r)| r.clone())
            .unwrap_or(Value::Null);
        assert!(success.is_object(), "{method} {path} documents its success");
        assert!(
            success["headers"]["X-RateLimit-Remaining"].is_object(),
            "{method} {path} documents the rate-limit headers"
        );
    }
    for field in ["error", "code", "status"] {
        assert!(
            doc["components"]["schemas"]["ErrorBody"]["required"]
                .as_array()
                .is_some_and(|r| r.iter().any(|f| f == field)),
            "ErrorBody requires {field}"
        );
    }
}

backend_tests!(document_and_swagger_ui_are_served_without_a_key);

async fn document_and_swagger_ui_are_served_without_a_key(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let served = TestResponse::from(app.api(Method::GET, "/openapi.json", None).send().await).await;
    assert_eq!(served.status, 200, "{}", served.text);
    assert!(
        served
            .header("content-type")
            .is_some_and(|c| c.starts_with("application/json"))
    );
    assert_eq!(served.body, document());

    // The document's route does not open the rest of /api/v1.
    TestResponse::from(app.api(Method::GET, "/tickets", None).send().await)
        .await
        .assert_error(401, "missing_api_key");
    TestResponse::from(app.api(Method::GET, "/openapi.jsonx", None).send().await)
        .await
        .assert_error(401, "missing_api_key");

    // Swagger UI, from the binary's own assets.
    let ui = app.client.get(app.url("/docs/")).send().await.expect("ui");
    assert_eq!(ui.status(), 200);
    let html = ui.text().await.expect("html");
    assert!(html.contains("swagger-ui"), "{html}");
    let init = app
        .client
        .get(app.url("/docs/swagger-initializer.js"))
        .send()
        .await
        .expect("initializer");
    assert_eq!(init.status(), 200);
    assert!(
        init.text()
            .await
            .expect("js")
            .contains("/api/v1/openapi.json")
    );
    let bundle = app
        .client
        .get(app.url("/docs/swagger-ui-bundle.js"))
        .send()
        .await
        .expect("bundle");
    assert_eq!(bundle.status(), 200);
    assert!(bundle.bytes().await.expect("js").len() > 100_000);
}

/// Two schemas registered under one name collapse into one component, and
/// the document then shows one type's body for the other's operation (the
/// business-hours body for creating a custom field, the ticket update for
/// updating settings). Every name must stand for one schema.
#[test]
fn no_two_schemas_share_a_name() {
    assert_eq!(
        supportdesk::app::openapi_schema_collisions(),
        Vec::<String>::new()
    );
}

/// The bodies of the operations whose Rust types were named alike each
/// have a schema of their own, named after what they are.
#[test]
fn request_bodies_are_named_after_their_operation() {
    let doc = document();
    let body_of = |method: &str, path: &str| {
        doc["paths"][format!("/api/v1{path}")][method]["requestBody"]["content"]["application/json"]
            ["schema"]["$ref"]
            .as_str()
            .map(|r| r.trim_start_matches("#/components/schemas/").to_string())
    };
    let expected = [
        ("patch", "/tickets/{id}", "UpdateTicket"),
        ("patch", "/settings", "UpdateSettings"),
        ("post", "/settings/custom-fields", "CreateCustomField"),
        (
            "patch",
            "/settings/custom-fields/{key}",
            "UpdateCustomField",
        ),
        ("post", "/settings/business-hours", "CreateBusinessHours"),
        (
            "patch",
            "/settings/business-hours/{id}",
            "UpdateBusinessHours",
        ),
    ];
    for (method, path, name) in expected {
        assert_eq!(
            body_of(method, path).as_deref(),
            Some(name),
            "{method} {path}"
        );
    }
    let schemas = doc["components"]["schemas"].as_object().expect("schemas");
    // `ErrorBody` is the error body, `DeliveryWithBody` a delivery with
    // the body it sends: named after what they are.
    let named_for_what = ["ErrorBody", "DeliveryWithBody"];
    let generic: Vec<&String> = schemas
        .keys()
        .filter(|name| name.ends_with("Body") && !named_for_what.contains(&name.as_str()))
        .collect();
    assert!(
        generic.is_empty(),
        "schemas named after no type: {generic:?}"
    );
}

/// A list's items are its record's own schema (`Ticket`), referenced, not
/// an inline copy a generated client would name `CursorPageTicketDataItem`.
#[test]
fn list_items_reference_their_records_schema() {
    let doc = document();
    let schemas = doc["components"]["schemas"].as_object().expect("schemas");
    let envelopes: Vec<(&String, &str)> = schemas
        .keys()
        .filter_map(|name| {
            let (_, item) = name.split_once('_')?;
            Some((name, item))
        })
        .collect();
    assert!(
        envelopes
            .iter()
            .any(|(name, _)| *name == "CursorPage_Ticket")
    );
    for (envelope, item) in envelopes {
        assert_eq!(
            schemas[envelope]["properties"]["data"]["items"]["$ref"],
            format!("#/components/schemas/{item}"),
            "{envelope}"
        );
    }
}

/// Changing a channel's address to another channel's is refused with 409,
/// as creating one is: both say so (schemathesis received an undocumented
/// 409 from the update).
#[test]
fn an_email_channels_create_and_update_document_the_address_conflict() {
    let doc = document();
    for (path, method) in [
        ("/api/v1/channels/email", "post"),
        ("/api/v1/channels/email/{id}", "patch"),
    ] {
        let responses = &doc["paths"][path][method]["responses"];
        assert!(
            responses.get("409").is_some(),
            "{method} {path} documents no 409: {responses}"
        );
    }
}
