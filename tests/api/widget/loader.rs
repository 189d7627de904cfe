//! The embeddable widget's files: `/widget.js` (small, cacheable) and the
//! chat frame (embeddable anywhere, only our scripts).

use std::io::Write;

use crate::backend_tests;
use crate::support::{Backend, TestApp, TestResponse};

backend_tests!(
    the_loader_is_under_15_kib_gzipped_and_cacheable,
    the_frame_may_be_embedded_by_any_site_and_runs_only_our_scripts,
);

async fn fetch(app: &TestApp, path: &str) -> TestResponse {
    TestResponse::from(app.client.get(app.url(path)).send().await).await
}

async fn the_loader_is_under_15_kib_gzipped_and_cacheable(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let loader = fetch(&app, "/widget.js").await;
    loader.assert_status(200);
    assert_eq!(
        loader.header("content-type"),
        Some("text/javascript; charset=utf-8")
    );
    assert_eq!(loader.header("cache-control"), Some("public, max-age=300"));
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gzip.write_all(loader.text.as_bytes()).expect("gzip");
    let size = gzip.finish().expect("gzip").len();
    assert!(size <= 15 * 1024, "widget.js is {size} bytes gzipped");

    // Revalidation costs no body.
    let etag = loader.header("etag").expect("etag");
    let again = TestResponse::from(
        app.client
            .get(app.url("/widget.js"))
            .header("If-None-Match", etag)
            .send()
            .await,
    )
    .await;
    assert_eq!(again.status, 304);
}

async fn the_frame_may_be_embedded_by_any_site_and_runs_only_our_scripts(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let frame = fetch(&app, "/widget/frame.html").await;
    frame.assert_status(200);
    let csp = frame.header("content-security-policy").expect("a CSP");
    for directive in [
        "frame-ancestors *",
        "script-src 'self'",
        "connect-src 'self'",
    ] {
        assert!(csp.contains(directive), "{directive} in {csp}");
    }
    assert_eq!(frame.header("x-frame-options"), None);
    for locale in ["en", "fr"] {
        let strings = fetch(&app, &format!("/widget/locales/{locale}.json")).await;
        assert!(strings.assert_status(200)["startChat"].is_string());
    }
    fetch(&app, "/widget/nope.js")
        .await
        .assert_error(404, "not_found");
}
