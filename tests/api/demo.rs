//! The web demo at `/demo/`: embedded pages with their content types and
//! security headers, no API key anywhere in what a visitor loads; the
//! made-up shop on its own origin and its demo-only identity-token route.

use serde_json::json;

use supportdesk::bootstrap::{DemoCreated, ensure_demo};

use crate::backend_tests;
use crate::support::{Backend, TestApp, TestResponse};

backend_tests!(
    the_demo_pages_are_absent_when_the_demo_is_off,
    demo_pages_are_served_with_security_headers,
    demo_serves_only_its_own_files,
    the_shop_embeds_the_widget_from_another_origin_as_a_customer_would,
    the_demo_leads_to_the_shop_on_its_own_origin,
    the_identity_token_route_is_absent_when_the_demo_is_off,
    a_demo_identity_token_gives_a_verified_session,
    the_identity_token_route_refuses_an_unknown_widget_key,
    the_identity_token_route_signs_for_no_other_company,
    the_shop_shows_no_customers_widget_key,
);

async fn spawn_demo(backend: Backend) -> (TestApp, String) {
    let app = TestApp::spawn_with(backend, |config| config.demo = true).await;
    let shop = app.shop_url.clone().expect("the demo shop runs");
    (app, shop)
}

/// The demo company, made as a demo start makes it on an empty database.
async fn demo_company(app: &TestApp) -> DemoCreated {
    ensure_demo(&app.state.db, &app.address)
        .await
        .expect("bootstrap")
        .expect("the database was empty")
}

async fn the_shop_embeds_the_widget_from_another_origin_as_a_customer_would(backend: Backend) {
    let (app, shop) = spawn_demo(backend).await;
    let demo = demo_company(&app).await;
    assert_ne!(shop, app.address, "another origin");
    let page = TestResponse::from(app.client.get(format!("{shop}/")).send().await).await;
    page.assert_status(200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let tag = format!(
        r#"<script src="{}/widget.js" data-widget-key="{}""#,
        app.address, demo.entity.widget_key_test
    );
    assert!(page.text.contains(&tag), "{tag} in the page");
    let csp = page.header("content-security-policy").expect("a CSP");
    for directive in [
        format!("script-src 'self' {}", app.address),
        format!("frame-src {}", app.address),
        "default-src 'self'".to_string(),
    ] {
        assert!(csp.contains(&directive), "{directive} in {csp}");
    }
    let script =
        TestResponse::from(app.client.get(format!("{shop}/js/shop.js")).send().await).await;
    script.assert_status(200);
    assert!(!page.text.contains("svc_"), "no API key in the shop");
}

async fn the_demo_leads_to_the_shop_on_its_own_origin(backend: Backend) {
    let (app, shop) = spawn_demo(backend).await;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let r = TestResponse::from(client.get(app.url("/demo/")).send().await).await;
    assert_eq!(r.status, 303);
    assert_eq!(r.header("location"), Some(format!("{shop}/").as_str()));
}

async fn the_identity_token_route_is_absent_when_the_demo_is_off(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    assert_eq!(app.shop_url, None);
    let body = json!({"widgetKey": acme.entity.widget_key_test});
    let r = TestResponse::from(
        app.client
            .post(app.url("/demo/identity-token"))
            .json(&body)
            .send()
            .await,
    )
    .await;
    r.assert_error(404, "not_found");
}

async fn a_demo_identity_token_gives_a_verified_session(backend: Backend) {
    let (app, shop) = spawn_demo(backend).await;
    let demo = demo_company(&app).await;
    let body = json!({"widgetKey": demo.entity.widget_key_test});
    let signed = TestResponse::from(
        app.client
            .post(format!("{shop}/identity-token"))
            .json(&body)
            .send()
            .await,
    )
    .await;
    let token = signed.assert_status(200)["token"]
        .as_str()
        .expect("token")
        .to_string();
    let session = TestResponse::from(
        app.client
            .post(app.url("/widget/v1/sessions"))
            .json(&json!({"widgetKey": demo.entity.widget_key_test, "identityToken": token}))
            .send()
            .await,
    )
    .await;
    assert_eq!(
        session.assert_status(201)["visitor"],
        json!({"externalId": "demo-customer-1", "email": "dana@teapots.example",
            "name": "Dana Demo", "verified": true})
    );
}

async fn the_identity_token_route_refuses_an_unknown_widget_key(backend: Backend) {
    let (app, _shop) = spawn_demo(backend).await;
    let demo = demo_company(&app).await;
    for key in [
        "wk_test_nobodyhasthis".to_string(),
        demo.entity.widget_key_live.clone(),
    ] {
        let r = TestResponse::from(
            app.client
                .post(app.url("/demo/identity-token"))
                .json(&json!({"widgetKey": key}))
                .send()
                .await,
        )
        .await;
        r.assert_error(400, "validation_failed");
    }
}

async fn the_identity_token_route_signs_for_no_other_company(backend: Backend) {
    let (app, shop) = spawn_demo(backend).await;
    demo_company(&app).await;
    let acme = app.company().await;
    for url in [
        format!("{shop}/identity-token"),
        app.url("/demo/identity-token"),
    ] {
        let r = TestResponse::from(
            app.client
                .post(url)
                .json(&json!({"widgetKey": acme.entity.widget_key_test}))
                .send()
                .await,
        )
        .await;
        r.assert_error(400, "validation_failed");
    }
    let secret: Option<String> = supportdesk::on_db!(&app.state.db, c => sqlx::query_scalar(
        "SELECT widget_secret FROM entities WHERE id = $1")
        .bind(acme.entity.id).fetch_one(c).await.expect("entity"));
    assert_eq!(
        secret, None,
        "no secret written into another company's entity"
    );
}

async fn the_shop_shows_no_customers_widget_key(backend: Backend) {
    // The demo enabled on a database whose oldest company is a customer's.
    let (app, shop) = spawn_demo(backend).await;
    let acme = app.company().await;
    let page = TestResponse::from(app.client.get(format!("{shop}/")).send().await).await;
    page.assert_status(200);
    assert!(
        !page.text.contains(&acme.entity.widget_key_test),
        "the customer's widget key is not shown"
    );
}

async fn page(app: &TestApp, path: &str) -> TestResponse {
    TestResponse::from(app.client.get(app.url(path)).send().await).await
}

async fn the_demo_pages_are_absent_when_the_demo_is_off(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let acme = app.company().await;
    for path in [
        "/demo",
        "/demo/",
        "/demo/index.html",
        "/demo/visitor.html",
        "/demo/agent.html",
        "/demo/js/visitor.js",
    ] {
        let r = page(&app, path).await;
        r.assert_error(404, "not_found");
        assert!(
            !r.text.contains(&acme.entity.widget_key_test),
            "{path} shows no widget key"
        );
    }
}

async fn demo_pages_are_served_with_security_headers(backend: Backend) {
    let (app, _shop) = spawn_demo(backend).await;
    for (path, content_type) in [
        ("/demo/visitor.html", "text/html; charset=utf-8"),
        ("/demo/agent.html", "text/html; charset=utf-8"),
        ("/demo/js/visitor.js", "text/javascript; charset=utf-8"),
        ("/demo/js/socket.js", "text/javascript; charset=utf-8"),
        ("/demo/css/base.css", "text/css; charset=utf-8"),
        ("/demo/favicon.svg", "image/svg+xml"),
    ] {
        let r = page(&app, path).await;
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.header("content-type"), Some(content_type), "{path}");
        let csp = r.header("content-security-policy").unwrap_or_default();
        for directive in [
            "default-src 'none'",
            "script-src 'self'",
            "connect-src 'self'",
            "frame-ancestors 'self'",
            "object-src 'none'",
        ] {
            assert!(csp.contains(directive), "{path}: {directive} in {csp}");
        }
        assert!(!csp.contains("unsafe-inline"), "{path}: {csp}");
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
        assert_eq!(r.header("referrer-policy"), Some("no-referrer"));
        assert_eq!(r.header("x-frame-options"), Some("SAMEORIGIN"));
        assert!(r.header("etag").is_some(), "{path}");
    }

    // The pages link what they need, and the visitor page holds no key.
    let visitor = page(&app, "/demo/visitor.html").await;
    assert!(visitor.text.contains("js/visitor.js"));
    assert!(
        !visitor.text.contains("svc_"),
        "no API key in the visitor page"
    );

    // Revalidation: the same ETag is a 304 without a body.
    let first = page(&app, "/demo/js/visitor.js").await;
    let etag = first.header("etag").expect("etag").to_string();
    let again = TestResponse::from(
        app.client
            .get(app.url("/demo/js/visitor.js"))
            .header("If-None-Match", &etag)
            .send()
            .await,
    )
    .await;
    assert_eq!(again.status, 304);
    assert!(again.text.is_empty());

    // /demo without the slash goes to /demo/.
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let bare = client.get(app.url("/demo")).send().await.expect("sent");
    assert_eq!(bare.status().as_u16(), 308);
    assert_eq!(
        bare.headers().get("location").and_then(|v| v.to_str().ok()),
        Some("/demo/")
    );
}

async fn demo_serves_only_its_own_files(backend: Backend) {
    let (app, _shop) = spawn_demo(backend).await;
    for path in [
        "/demo/nope.html",
        "/demo/../Cargo.toml",
        "/demo/%2e%2e/Cargo.toml",
        "/demo/..%2fCargo.toml",
        "/demo/js/..%2f..%2fCargo.toml",
        "/demo/tests/package.json",
        "/demo/..%5cCargo.toml",
    ] {
        page(&app, path).await.assert_error(404, "not_found");
    }
}
