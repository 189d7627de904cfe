//! What a newcomer meets first: the page at `/` and the lines a start
//! prints, both naming where to go next (the API reference, the OpenAPI
//! document, the agent console) instead of a bare 404.

use axum::http::{HeaderValue, header};
use axum::response::{Html, IntoResponse, Response};

use crate::openapi::DOCUMENT_PATH;

/// Swagger UI (see `openapi::router`).
const DOCS_PATH: &str = "/docs/";
/// The agent console, always served.
const CONSOLE_PATH: &str = crate::console::PATH;

/// No scripts, styles or frames: the page is links only.
const CSP: &str = "default-src 'none'; base-uri 'none'; form-action 'none'; \
    frame-ancestors 'none'";

/// `GET /`: the agent console first (where an agent signs in), then the
/// API reference and the OpenAPI document; with the demo enabled, the demo
/// shop's widget too.
pub fn page(demo_enabled: bool) -> Response {
    let demo = if demo_enabled {
        r#"<li><a href="/demo/">Demo shop</a> (the visitor widget on a made-up site)</li>"#
    } else {
        ""
    };
    let html = format!(
        r#"<!doctype html>
<html lang="en"><meta charset="utf-8"><title>supportdesk</title>
<h1>supportdesk</h1>
<p>A customer-support desk: the REST API under <code>/api/v1</code> (with an
<code>X-API-Key</code> header) and its WebSocket at <code>/api/v1/ws</code>.</p>
<p><a href="{CONSOLE_PATH}">Agent console</a>: sign in with your email and
password, or with your company's SSO.</p>
<ul>
<li><a href="{DOCS_PATH}">API reference</a> (Swagger UI)</li>
<li><a href="{DOCUMENT_PATH}">OpenAPI document</a></li>
{demo}
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
/// agent console, the API and its reference are.
pub fn startup_lines(public_url: &str) -> Vec<String> {
    vec![
        format!("supportdesk listening on {public_url}/"),
        format!("  Agent console:  {public_url}{CONSOLE_PATH}"),
        format!("  API:            {public_url}/api/v1"),
        format!("  API reference:  {public_url}{DOCS_PATH}"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_startup_lines_name_the_console_and_the_reference() {
        let lines = startup_lines("http://127.0.0.1:8080");
        assert!(lines.contains(&"  Agent console:  http://127.0.0.1:8080/app/".to_string()));
        assert!(lines.contains(&"  API reference:  http://127.0.0.1:8080/docs/".to_string()));
    }
}
