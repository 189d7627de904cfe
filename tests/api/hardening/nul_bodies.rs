//! NUL characters in JSON bodies and query strings: neither Postgres
//! `text` nor `jsonb` can hold one, so every route refuses them at the edge
//! with a 400 naming where the NUL is, and changes nothing.

use reqwest::Method;
use serde_json::json;

use crate::backend_tests;
use crate::support::{Backend, TestApp, TestResponse, assert_invalid};

backend_tests!(
    a_rename_holding_a_nul_is_refused_and_changes_nothing,
    a_nul_inside_a_list_is_refused_naming_its_place,
    a_nul_in_an_unknown_key_is_refused_naming_the_key,
    a_nul_in_a_search_is_refused_naming_the_parameter,
    a_nul_in_a_mail_providers_secret_is_refused_naming_it,
);

async fn a_rename_holding_a_nul_is_refused_and_changes_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let role = app
        .post(
            "/roles",
            &acme.key,
            json!({"name": "Leads", "scopes": ["tickets:read"]}),
        )
        .await
        .assert_status(201)
        .clone();
    let path = format!("/roles/{}", role["id"].as_str().expect("id"));
    let r = app
        .patch(&path, &acme.key, json!({"name": "Le\u{0}ads"}))
        .await;
    assert_invalid(&r, &["name"]);
    let read = app.get(&path, &acme.key).await.assert_status(200).clone();
    assert_eq!(read["name"], "Leads");
}

async fn a_nul_inside_a_list_is_refused_naming_its_place(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = app
        .post(
            "/roles",
            &acme.key,
            json!({"name": "Leads", "scopes": ["tickets:read", "tickets:write\u{0}"]}),
        )
        .await;
    assert_invalid(&r, &["scopes[1]"]);
}

async fn a_nul_in_an_unknown_key_is_refused_naming_the_key(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = app
        .post(
            "/roles",
            &acme.key,
            json!({"name": "Leads", "scopes": ["tickets:read"], "x\u{0}": [1]}),
        )
        .await;
    assert_invalid(&r, &["x\u{0}"]);
}

async fn a_nul_in_a_search_is_refused_naming_the_parameter(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let r = app.get("/tickets?limit=5&q=re%00fund", &acme.key).await;
    assert_invalid(&r, &["q"]);
}

async fn a_nul_in_a_mail_providers_secret_is_refused_naming_it(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let path = format!(
        "/inbound/email/{}/postmark?secret=pm%00secret",
        uuid::Uuid::now_v7()
    );
    let request = app.api(Method::POST, &path, None).json(&json!({}));
    let r = TestResponse::from(request.send().await).await;
    assert_invalid(&r, &["secret"]);
}
