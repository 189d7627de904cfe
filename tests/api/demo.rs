//! The web demo at `/demo/`: embedded pages with their content types and
//! security headers, no API key anywhere in what a visitor loads.

use crate::backend_tests;
use crate::support::{Backend, TestApp, TestResponse};

backend_tests!(
    demo_pages_are_served_with_security_headers,
    demo_serves_only_its_own_files,
);

async fn page(app: &TestApp, path: &str) -> TestResponse {
    TestResponse::from(app.client.get(app.url(path)).send().await).await
}

async fn demo_pages_are_served_with_security_headers(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    for (path, content_type) in [
        ("/demo/", "text/html; charset=utf-8"),
        ("/demo/index.html", "text/html; charset=utf-8"),
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
    let landing = page(&app, "/demo/").await;
    assert!(landing.text.contains("agent.html") && landing.text.contains("visitor.html"));
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
    let app = TestApp::spawn(backend).await;
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
