//! What a newcomer meets first: the page at `/` names where to go next, and
//! the CLI lists the companies (the way to find a lost key's company).

use serde_json::json;

use crate::backend_tests;
use crate::platform::{cli, cli_json};
use crate::support::{Backend, TestApp, TestResponse};

backend_tests!(
    the_root_page_links_the_api_reference_and_the_document,
    the_root_page_links_the_demo_shop_with_the_demo_enabled,
    the_console_is_served_at_app_without_the_demo,
    the_cli_lists_every_company_oldest_first,
);

async fn root(app: &TestApp) -> TestResponse {
    TestResponse::from(app.client.get(app.url("/")).send().await).await
}

async fn the_root_page_links_the_api_reference_and_the_document(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let page = root(&app).await;
    page.assert_status(200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    for link in [r#"href="/docs/""#, r#"href="/api/v1/openapi.json""#] {
        assert!(page.text.contains(link), "{link} in {}", page.text);
    }
    assert!(
        page.text.contains(r#"href="/app/""#),
        "the console linked in {}",
        page.text
    );
    // The links lead somewhere.
    for path in ["/docs/", "/api/v1/openapi.json", "/app/"] {
        let r = TestResponse::from(app.client.get(app.url(path)).send().await).await;
        r.assert_status(200);
    }
}

async fn the_root_page_links_the_demo_shop_with_the_demo_enabled(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.demo = true).await;
    let page = root(&app).await;
    page.assert_status(200);
    for link in [r#"href="/app/""#, r#"href="/demo/""#] {
        assert!(page.text.contains(link), "{link} in {}", page.text);
    }
}

async fn the_console_is_served_at_app_without_the_demo(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let get = |path: &'static str| {
        let request = app.client.get(app.url(path));
        async move { TestResponse::from(request.send().await).await }
    };
    let page = get("/app/").await;
    page.assert_status(200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert!(page.text.contains("js/agent.js"), "the console's page");
    assert!(
        page.header("content-security-policy")
            .is_some_and(|csp| csp.contains("script-src 'self'")),
        "served with the CSP"
    );
    get("/app/js/agent.js").await.assert_status(200);
    get("/app/css/agent.css").await.assert_status(200);
    for path in ["/app/visitor.html", "/app/index.html", "/app/js/shop.js"] {
        get(path).await.assert_error(404, "not_found");
    }
}

async fn the_cli_lists_every_company_oldest_first(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let first = app.company().await;
    let second = cli_json(&app, &["companies", "create", "--name", "Globex", "--json"]);
    let listed = cli_json(&app, &["companies", "list", "--json"]);
    let names: Vec<_> = listed["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|c| (c["id"].clone(), c["name"].clone()))
        .collect();
    assert_eq!(
        names,
        vec![
            (json!(first.company.id), json!("Acme")),
            (second["id"].clone(), json!("Globex")),
        ]
    );
    let (ok, text, _) = cli(&app, &["companies", "list"]);
    assert!(ok);
    let line = text.lines().nth(1).expect("a line per company");
    assert!(
        line.starts_with(&format!(
            "{}  Globex  active  created ",
            second["id"].as_str().expect("id")
        )),
        "{line}"
    );
}
