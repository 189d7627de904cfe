//! The public visitor widget API (`/widget/v1`): widget keys instead of API
//! keys, knowledge-base search of one entity, CORS on this surface only,
//! per-IP rate limits, errors in our shape.

use reqwest::Method;
use serde_json::{Value, json};
use supportdesk::auth::{Mode, ScopeSet};

use crate::backend_tests;
use crate::support::{Backend, TestApp, TestResponse};

backend_tests!(
    kb_search_returns_only_published_articles_of_that_entity,
    kb_article_reads_published_articles_of_that_entity_only,
    widget_keys_are_checked_with_errors_in_our_shape,
    cors_is_open_on_the_widget_api_only,
);

/// A GET on the widget API (no API key, ever).
async fn widget_get(app: &TestApp, path_and_query: &str) -> TestResponse {
    TestResponse::from(app.client.get(app.url(path_and_query)).send().await).await
}

fn titles(body: &Value) -> Vec<String> {
    body.as_array()
        .unwrap_or_else(|| panic!("array in {body}"))
        .iter()
        .map(|hit| hit["title"].as_str().expect("title").to_string())
        .collect()
}

async fn article(app: &TestApp, key: &str, entity: &str, title: &str, published: bool) -> String {
    let body = app
        .post(
            "/kb/articles",
            key,
            json!({"title": title, "entityId": entity, "isPublished": published,
                   "content": format!("{title}. Open Settings, then Security, and follow the steps.")}),
        )
        .await;
    body.assert_status(201)["id"]
        .as_str()
        .expect("id")
        .to_string()
}

async fn kb_search_returns_only_published_articles_of_that_entity(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let entity = acme.entity.id.to_string();
    let other = supportdesk::entities::store::create(&app.state.db, acme.company.id, "EU", None)
        .await
        .expect("second entity");
    let live_key = app.key(acme.company.id, Mode::Live, ScopeSet::all()).await;
    let rival = app.company().await;

    article(&app, &acme.key, &entity, "Reset your password", true).await;
    article(&app, &acme.key, &entity, "Password rules (draft)", false).await;
    article(
        &app,
        &acme.key,
        &other.id.to_string(),
        "Password policy in the EU",
        true,
    )
    .await;
    article(&app, &live_key, &entity, "Live password help", true).await;
    article(
        &app,
        &rival.key,
        &rival.entity.id.to_string(),
        "Rival password",
        true,
    )
    .await;

    let search = |key: String, q: &str| {
        let q = q.to_string();
        let app = &app;
        async move { widget_get(app, &format!("/widget/v1/kb/search?widgetKey={key}&q={q}")).await }
    };

    // The TEST widget key: test-mode, published, this entity only.
    let hits = search(acme.entity.widget_key_test.clone(), "passw").await;
    assert_eq!(titles(hits.assert_status(200)), ["Reset your password"]);
    let hit = &hits.body[0];
    for name in ["id", "title", "slug", "excerpt"] {
        assert!(hit[name].is_string(), "{name} in {hit}");
    }
    assert!(hit.get("content").is_none(), "no content in a hit: {hit}");
    assert_eq!(hits.header("cache-control"), Some("no-store"));

    // The LIVE widget key of the same entity sees the live article only.
    let live = search(acme.entity.widget_key_live.clone(), "password").await;
    assert_eq!(titles(live.assert_status(200)), ["Live password help"]);

    // The other entity's key sees its own article.
    let eu = search(other.widget_key_test.clone(), "password").await;
    assert_eq!(titles(eu.assert_status(200)), ["Password policy in the EU"]);

    // Nothing matches, and text that is only punctuation: empty, not an error.
    let none = search(acme.entity.widget_key_test.clone(), "zebra").await;
    assert_eq!(none.assert_status(200), &json!([]));
    let punct = search(acme.entity.widget_key_test.clone(), "%22%2A%28").await;
    assert_eq!(punct.assert_status(200), &json!([]));

    // q is required; limit is checked and clamped.
    let key = &acme.entity.widget_key_test;
    let missing = widget_get(&app, &format!("/widget/v1/kb/search?widgetKey={key}")).await;
    missing.assert_error(400, "validation_failed");
    assert_eq!(missing.body["details"][0]["field"], "q");
    widget_get(
        &app,
        &format!("/widget/v1/kb/search?widgetKey={key}&q=reset&limit=0"),
    )
    .await
    .assert_error(400, "validation_failed");
    let clamped = widget_get(
        &app,
        &format!("/widget/v1/kb/search?widgetKey={key}&q=reset&limit=5000"),
    )
    .await;
    assert_eq!(titles(clamped.assert_status(200)), ["Reset your password"]);
}

async fn kb_article_reads_published_articles_of_that_entity_only(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    let entity = acme.entity.id.to_string();
    let other = supportdesk::entities::store::create(&app.state.db, acme.company.id, "EU", None)
        .await
        .expect("second entity");
    let published = article(&app, &acme.key, &entity, "Reset your password", true).await;
    let draft = article(&app, &acme.key, &entity, "Unfinished", false).await;
    let elsewhere = article(&app, &acme.key, &other.id.to_string(), "EU only", true).await;

    let key = &acme.entity.widget_key_test;
    let read = widget_get(
        &app,
        &format!("/widget/v1/kb/articles/{published}?widgetKey={key}"),
    )
    .await;
    let body = read.assert_status(200);
    assert_eq!(body["title"], "Reset your password");
    assert!(
        body["content"]
            .as_str()
            .expect("content")
            .contains("Settings")
    );

    for hidden in [&draft, &elsewhere, &"nope".to_string()] {
        widget_get(
            &app,
            &format!("/widget/v1/kb/articles/{hidden}?widgetKey={key}"),
        )
        .await
        .assert_error(404, "not_found");
    }
    // The LIVE key of the same entity does not see test-mode articles.
    let live = &acme.entity.widget_key_live;
    widget_get(
        &app,
        &format!("/widget/v1/kb/articles/{published}?widgetKey={live}"),
    )
    .await
    .assert_error(404, "not_found");
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
    supportdesk::companies::store::set_suspended(&app.state.db, acme.company.id, true)
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
