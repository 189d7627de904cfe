//! What a newcomer meets first: the page at `/` names where to go next, and
//! the CLI lists the companies (the way to find a lost key's company).

use serde_json::json;

use crate::backend_tests;
use crate::platform::{cli, cli_json};
use crate::support::{Backend, TestApp, TestResponse};

backend_tests!(
    the_root_page_links_the_api_reference_and_the_document,
    the_root_page_links_the_console_with_the_demo_enabled,
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
        !page.text.contains(r#"href="/demo/agent.html""#),
        "no link to a console that is not served"
    );
    // The links lead somewhere.
    for path in ["/docs/", "/api/v1/openapi.json"] {
        let r = TestResponse::from(app.client.get(app.url(path)).send().await).await;
        r.assert_status(200);
    }
}

async fn the_root_page_links_the_console_with_the_demo_enabled(backend: Backend) {
    let app = TestApp::spawn_with(backend, |c| c.demo = true).await;
    let page = root(&app).await;
    page.assert_status(200);
    assert!(
        page.text.contains(r#"href="/demo/agent.html""#),
        "the console linked in {}",
        page.text
    );
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
