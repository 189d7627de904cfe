//! The OpenAPI document describes cursor paging on each cursor-paged list.

use serde_json::Value;

const LISTS: [&str; 6] = [
    "/tickets",
    "/chat/sessions",
    "/kb/articles",
    "/tickets/{id}/comments",
    "/tickets/{id}/activities",
    "/company/webhooks/{id}/deliveries",
];

/// The schema `reference` points to (`#/components/schemas/…`), or the
/// schema itself when it is inline.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"].as_str() {
        Some(reference) => {
            let name = reference.trim_start_matches("#/components/schemas/");
            &doc["components"]["schemas"][name]
        }
        None => schema,
    }
}

#[test]
fn each_cursor_paged_list_documents_after_and_next_cursor() {
    let doc = serde_json::to_value(supportdesk::app::openapi_document()).expect("serialises");
    for path in LISTS {
        let operation = &doc["paths"][format!("/api/v1{path}")]["get"];
        let params: Vec<&str> = operation["parameters"]
            .as_array()
            .expect("parameters")
            .iter()
            .filter_map(|p| p["name"].as_str())
            .collect();
        assert!(params.contains(&"after"), "{path}: {params:?}");
        let body = &operation["responses"]["200"]["content"]["application/json"]["schema"];
        let properties = &resolve(&doc, body)["properties"];
        assert!(
            properties.get("nextCursor").is_some(),
            "{path}: {properties}"
        );
        assert!(
            properties.get("totalIsLowerBound").is_some(),
            "{path}: {properties}"
        );
    }
}
