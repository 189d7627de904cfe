//! What a newcomer meets first: the page at `/` and the lines a start
//! prints, both naming where to go next (the API reference, the OpenAPI
//! document, the agent console) instead of a bare 404.

use axum::http::{HeaderValue, header};
use axum::response::{Html, IntoResponse, Response};

use crate::openapi::DOCUMENT_PATH;

/// Swagger UI (see `openapi::router`).
const DOCS_PATH: &str = "/docs/";
/// The demo's agent console, served with the demo enabled only.
const CONSOLE_PATH: &str = "/demo/agent.html";

/// No scripts, styles or frames: the page is links only.
const CSP: &str = "default-src 'none'; base-uri 'none'; form-action 'none'; \
    frame-ancestors 'none'";

/// `GET /`: links to the API reference, the OpenAPI document and, with the
/// demo enabled, the agent console (else how to enable it).
pub fn page(demo_enabled: bool) -> Response {
    let console = if demo_enabled {
        format!(
            r#"<li><a href="{CONSOLE_PATH}">Agent console</a> (sign in with a TEST API key)</li>"#
        )
    } else {
        "<li>Agent console: start the service with <code>--demo</code> \
         (<code>SUPPORTDESK_DEMO=true</code>) to serve it at \
         <code>/demo/agent.html</code></li>"
            .to_string()
    };
    let html = format!(
        r#"<!doctype html>
<html lang="en"><meta charset="utf-8"><title>supportdesk</title>
<h1>supportdesk</h1>
<p>A customer-support desk: the REST API under <code>/api/v1</code> (with an
<code>X-API-Key</code> header) and its WebSocket at <code>/api/v1/ws</code>.</p>
<ul>
<li><a href="{DOCS_PATH}">API reference</a> (Swagger UI)</li>
<li><a href="{DOCUMENT_PATH}">OpenAPI document</a></li>
{console}
</ul>
</html>
"#
    );
    let mut response = Html(html).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// The lines a start prints after it listens at `public_url`: where the
/// API, its reference and the agent console are.
pub fn startup_lines(public_url: &str, demo_enabled: bool) -> Vec<String> {
    let console = if demo_enabled {
        format!("{public_url}{CONSOLE_PATH}")
    } else {
        "start with --demo to serve it".to_string()
    };
    vec![
        format!("supportdesk listening on {public_url}/"),
        format!("  API:            {public_url}/api/v1"),
        format!("  API reference:  {public_url}{DOCS_PATH}"),
        format!("  Agent console:  {console}"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_startup_lines_name_the_reference_and_the_console() {
        let lines = startup_lines("http://127.0.0.1:8080", true);
        assert!(lines.contains(&"  API reference:  http://127.0.0.1:8080/docs/".to_string()));
        assert!(
            lines.contains(&"  Agent console:  http://127.0.0.1:8080/demo/agent.html".to_string())
        );
        let without_demo = startup_lines("http://127.0.0.1:8080", false);
        assert!(
            without_demo.contains(&"  Agent console:  start with --demo to serve it".to_string())
        );
    }
}
