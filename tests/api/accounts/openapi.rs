//! The agent sign-in operations in the OpenAPI document: each route under
//! `/api/v1/auth` has its operation, the ones that need a session name the
//! session cookie (and, for a change, the CSRF header) as their security,
//! and a signed-in answer's body is the schema the document names.

use std::collections::BTreeSet;

use reqwest::Method;
use serde_json::Value;

use super::{agent_with_password, sign_in};
use crate::backend_tests;
use crate::support::{Backend, TestApp};

fn document() -> Value {
    serde_json::to_value(supportdesk::app::openapi_document()).expect("serialises")
}

/// The document's operations under `/api/v1/auth/`, as (METHOD, path).
fn auth_operations(doc: &Value) -> BTreeSet<(String, String)> {
    doc["paths"]
        .as_object()
        .expect("paths")
        .iter()
        .filter(|(path, _)| path.starts_with("/api/v1/auth/"))
        .flat_map(|(path, item)| {
            let methods = item.as_object().expect("path item").keys();
            methods.map(move |method| (method.to_ascii_uppercase(), path.clone()))
        })
        .collect()
}

#[test]
fn every_sign_in_route_has_an_operation() {
    let expected: BTreeSet<(String, String)> = [
        ("POST", "/login"),
        ("POST", "/logout"),
        ("GET", "/me"),
        ("GET", "/sessions"),
        ("DELETE", "/sessions"),
        ("DELETE", "/sessions/{id}"),
        ("POST", "/password-reset"),
        ("POST", "/password-reset/confirm"),
        ("POST", "/invitations/accept"),
        ("POST", "/password"),
        ("POST", "/totp/setup"),
        ("POST", "/totp/confirm"),
        ("DELETE", "/totp"),
        ("GET", "/keys"),
        ("POST", "/keys"),
        ("DELETE", "/keys/{id}"),
        ("GET", "/sso/{slug}/start"),
        ("GET", "/sso/callback"),
    ]
    .into_iter()
    .map(|(method, path)| (method.to_string(), format!("/api/v1/auth{path}")))
    .collect();
    assert_eq!(auth_operations(&document()), expected);
}

#[test]
fn a_change_made_with_the_session_requires_the_cookie_and_the_csrf_header() {
    let doc = document();
    let security = &doc["paths"]["/api/v1/auth/password"]["post"]["security"];
    assert_eq!(
        security,
        &serde_json::json!([{"SessionCookie": [], "CsrfToken": []}])
    );
    assert_eq!(
        doc["components"]["securitySchemes"]["SessionCookie"]["in"],
        "cookie"
    );
}

#[test]
fn signing_in_requires_no_credential() {
    let doc = document();
    let login = &doc["paths"]["/api/v1/auth/login"]["post"];
    assert!(login["security"].is_null(), "{login}");
    for status in ["401", "429"] {
        assert_eq!(
            login["responses"][status]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/ErrorBody",
            "login documents {status}"
        );
    }
}

backend_tests!(the_answer_of_me_has_every_field_its_schema_requires);

async fn the_answer_of_me_has_every_field_its_schema_requires(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    agent_with_password(&app, &acme, "ann@acme.example", "agent").await;
    let ann = sign_in(&app, "ann@acme.example", "test").await;
    let doc = document();

    let me = ann
        .send(&app, Method::GET, "/api/v1/auth/me", None, false)
        .await;

    let schema = &doc["components"]["schemas"]["Me"];
    let required: Vec<&str> = schema["required"]
        .as_array()
        .expect("required fields")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let body = me.assert_status(200);
    let missing: Vec<&str> = required
        .iter()
        .copied()
        .filter(|field| body.get(*field).is_none())
        .collect();
    assert_eq!(missing, Vec::<&str>::new(), "{body}");
}
