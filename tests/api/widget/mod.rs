//! The public visitor widget API (`/widget/v1`): widget keys instead of API
//! keys, CORS on this surface only, per-IP rate limits, errors in our shape.
//! Knowledge-base reads are in `kb`, chats and presence in `chat`.

mod chat;
mod identity;
mod kb;
mod links;
mod loader;
mod openapi;
mod proxies;
mod recheck;
mod sockets;
mod suggestions;
mod tokens;

use reqwest::Method;
use serde_json::{Value, json};

use crate::backend_tests;
use crate::support::{Backend, TestApp, TestResponse};

backend_tests!(
    widget_keys_are_checked_with_errors_in_our_shape,
    cors_is_open_on_the_widget_api_only,
);

/// A GET on the widget API (no API key, ever).
pub async fn widget_get(app: &TestApp, path_and_query: &str) -> TestResponse {
    TestResponse::from(app.client.get(app.url(path_and_query)).send().await).await
}

pub async fn widget_post(app: &TestApp, path: &str, body: Value) -> TestResponse {
    TestResponse::from(app.client.post(app.url(path)).json(&body).send().await).await
}

/// Starts a chat as a visitor would: with a widget key, no API key.
pub async fn start_chat(app: &TestApp, widget_key: &str, body: Value) -> Value {
    let mut body = body;
    body["widgetKey"] = json!(widget_key);
    widget_post(app, "/widget/v1/sessions", body)
        .await
        .assert_status(201)
        .clone()
}

pub fn text<'a>(body: &'a Value, name: &str) -> &'a str {
    body[name]
        .as_str()
        .unwrap_or_else(|| panic!("{name} in {body}"))
}

async fn widget_keys_are_checked_with_errors_in_our_shape(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;

    // Missing key: 400 naming the field; unknown or malformed: 404.
    let missing = widget_get(&app, "/widget/v1/kb/search?q=reset").await;
    missing.assert_error(400, "validation_failed");
    assert_eq!(missing.body["details"][0]["field"], "widgetKey");
    for key in [
        "wk_test_doesnotexist000000000000",
        "wk_live_doesnotexist000000000000",
        "svc_test_notawidgetkey",
        "anything",
    ] {
        let r = widget_get(&app, &format!("/widget/v1/kb/search?widgetKey={key}&q=x")).await;
        r.assert_error(404, "not_found");
        assert_eq!(r.body["error"], "Unknown widget key");
    }

    // An API key is no widget key, in the header or anywhere.
    let with_api_key = TestResponse::from(
        app.client
            .get(app.url("/widget/v1/kb/search?q=reset"))
            .header("X-API-Key", &acme.key)
            .send()
            .await,
    )
    .await;
    with_api_key.assert_error(400, "validation_failed");

    // A suspended company's widget stops working.
    supportdesk::companies::store::set_suspended(
        &app.state.db,
        acme.company.id,
        true,
        app.state.clock.now(),
    )
    .await
    .expect("suspend");
    let key = &acme.entity.widget_key_test;
    widget_get(&app, &format!("/widget/v1/kb/search?widgetKey={key}&q=x"))
        .await
        .assert_error(403, "account_suspended");

    // Unknown paths and methods under /widget/v1 keep our shape.
    widget_get(&app, "/widget/v1/nope")
        .await
        .assert_error(404, "not_found");
    let wrong_method = TestResponse::from(
        app.client
            .delete(app.url("/widget/v1/kb/search"))
            .send()
            .await,
    )
    .await;
    wrong_method.assert_error(405, "method_not_allowed");
}

async fn cors_is_open_on_the_widget_api_only(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let origin = "https://shop.example.com";
    let key = &acme.entity.widget_key_test;

    // A simple cross-origin GET on the widget API: allowed for any origin.
    let get = TestResponse::from(
        app.client
            .get(app.url(&format!("/widget/v1/kb/search?widgetKey={key}&q=x")))
            .header("Origin", origin)
            .send()
            .await,
    )
    .await;
    get.assert_status(200);
    assert_eq!(get.header("access-control-allow-origin"), Some("*"));

    // Errors are readable cross-origin too.
    let error = TestResponse::from(
        app.client
            .get(app.url("/widget/v1/kb/search?q=x"))
            .header("Origin", origin)
            .send()
            .await,
    )
    .await;
    error.assert_error(400, "validation_failed");
    assert_eq!(error.header("access-control-allow-origin"), Some("*"));

    // A preflight (a visitor token in Authorization needs one).
    let preflight = TestResponse::from(
        app.client
            .request(Method::OPTIONS, app.url("/widget/v1/kb/search"))
            .header("Origin", origin)
            .header("Access-Control-Request-Method", "GET")
            .header(
                "Access-Control-Request-Headers",
                "authorization, content-type",
            )
            .send()
            .await,
    )
    .await;
    assert!(preflight.status < 300, "preflight: {}", preflight.status);
    assert_eq!(preflight.header("access-control-allow-origin"), Some("*"));
    let methods = preflight
        .header("access-control-allow-methods")
        .unwrap_or_default()
        .to_ascii_uppercase();
    assert!(
        methods.contains("GET") && methods.contains("POST"),
        "allowed methods: {methods}"
    );
    let headers = preflight
        .header("access-control-allow-headers")
        .unwrap_or_default()
        .to_ascii_lowercase();
    assert!(
        headers.contains("content-type") && headers.contains("authorization"),
        "allowed headers: {headers}"
    );

    // The API and the demo pages are not opened to other origins.
    let api = TestResponse::from(
        app.api(Method::GET, "/entities", Some(&acme.key))
            .header("Origin", origin)
            .send()
            .await,
    )
    .await;
    api.assert_status(200);
    assert_eq!(api.header("access-control-allow-origin"), None);
    let api_preflight = TestResponse::from(
        app.client
            .request(Method::OPTIONS, app.url("/api/v1/entities"))
            .header("Origin", origin)
            .header("Access-Control-Request-Method", "GET")
            .header("Access-Control-Request-Headers", "x-api-key")
            .send()
            .await,
    )
    .await;
    assert_eq!(api_preflight.header("access-control-allow-origin"), None);
    let page = TestResponse::from(
        app.client
            .get(app.url("/demo/"))
            .header("Origin", origin)
            .send()
            .await,
    )
    .await;
    assert_eq!(page.header("access-control-allow-origin"), None);
}
