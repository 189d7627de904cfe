//! The agent console at `/app/`: the page an agent signs in to (email and
//! password, a second factor, or SSO) and works in, served by the service
//! itself from files embedded in the binary, with or without the demo.
//! Its files live beside the demo's (`web-demo/public/`); only the
//! console's own are served here, so `/app/` shows no demo page.

use axum::Router;
use axum::extract::Path;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

use crate::error::ApiError;
use crate::state::AppState;

/// Where the console is served.
pub const PATH: &str = "/app/";

/// The console's page (the folder's `agent.html`).
const PAGE: &str = "agent.html";

/// The paths of the links the service emails (see `accounts::links`): each
/// is the console's page, which shows the form its path names.
const LINK_PAGES: [&str; 2] = ["accept-invitation", "reset-password"];

/// `/app` (to `/app/`), `/app/` (the page) and the page's own files.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/app", get(|| async { Redirect::permanent(PATH) }))
        .route(
            PATH,
            get(|headers: HeaderMap| async move { crate::demo::serve(PAGE, &headers) }),
        )
        .route(
            "/app/{*path}",
            get(
                |Path(path): Path<String>, headers: HeaderMap| async move { file(&path, &headers) },
            ),
        )
}

/// One of the console's files, the page for an emailed link, or a 404 for
/// anything else.
fn file(path: &str, headers: &HeaderMap) -> Response {
    match served_file(path) {
        Some(file) => crate::demo::serve(file, headers),
        None => ApiError::not_found().into_response(),
    }
}

/// The file of the folder that `/app/{path}` answers with, if any.
fn served_file(path: &str) -> Option<&str> {
    if LINK_PAGES.contains(&path) {
        Some(PAGE)
    } else if is_console_file(path) {
        Some(path)
    } else {
        None
    }
}

/// The page, its icon, and its scripts and styles; never the demo's shop
/// or visitor pages.
fn is_console_file(path: &str) -> bool {
    path == PAGE
        || path == "favicon.svg"
        || ((path.starts_with("js/") || path.starts_with("css/"))
            && !path.starts_with("js/shop")
            && !path.starts_with("css/shop"))
}

#[cfg(test)]
mod tests {
    use super::{is_console_file, served_file};

    #[test]
    fn an_emailed_links_path_is_the_consoles_page() {
        assert_eq!(served_file("accept-invitation"), Some("agent.html"));
        assert_eq!(served_file("reset-password"), Some("agent.html"));
        assert_eq!(served_file("reset-password/x"), None);
    }

    #[test]
    fn only_the_consoles_own_files_are_served() {
        for path in [
            "agent.html",
            "favicon.svg",
            "js/agent.js",
            "js/console/live.js",
            "css/agent.css",
        ] {
            assert!(is_console_file(path), "{path}");
        }
        for path in [
            "index.html",
            "visitor.html",
            "js/shop.js",
            "css/shop.css",
            "",
        ] {
            assert!(!is_console_file(path), "{path}");
        }
    }
}
