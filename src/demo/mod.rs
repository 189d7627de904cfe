//! The web demo at `/demo/`: a visitor widget and an agent console, plain
//! HTML/CSS/JS from `web-demo/public/`, embedded in the binary (so
//! `cargo install` carries it) and served with strict security headers.

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use rust_embed::RustEmbed;

use crate::error::ApiError;
use crate::state::AppState;

/// The demo's files. In debug builds rust-embed reads them from disk, so
/// editing a page needs no rebuild; release builds carry them inside.
#[derive(RustEmbed)]
#[folder = "web-demo/public/"]
struct Assets;

/// Only our own scripts, styles and connections (the socket is same-origin:
/// `'self'` covers `ws:`/`wss:` to this host); no inline code, no framing
/// by other sites, no plugins, no `<base>` tricks.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    img-src 'self' data:; font-src 'self'; connect-src 'self'; manifest-src 'self'; \
    base-uri 'none'; form-action 'self'; frame-ancestors 'self'; object-src 'none'";

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/demo", get(|| async { Redirect::permanent("/demo/") }))
        .route("/demo/", get(|headers: HeaderMap| async move { serve("index.html", &headers) }))
        .route(
            "/demo/{*path}",
            get(|Path(path): Path<String>, headers: HeaderMap| async move { serve(&path, &headers) }),
        )
}

/// One embedded file with its content type, an ETag (its SHA-256) for
/// cheap revalidation, and the security headers.
fn serve(path: &str, headers: &HeaderMap) -> Response {
    let path = if path.is_empty() || path.ends_with('/') {
        format!("{path}index.html")
    } else {
        path.to_string()
    };
    // Never let `..` or a backslash near the file lookup (debug builds read
    // from disk).
    let suspicious = path.split(['/', '\\']).any(|seg| seg == "..") || path.contains('\\');
    let Some(file) = (!suspicious).then(|| Assets::get(&path)).flatten() else {
        return ApiError::not_found().into_response();
    };
    let etag = format!("\"{}\"", hex::encode(&file.metadata.sha256_hash()[..16]));
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|tag| tag.trim() == etag));
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static(content_type(&path)),
            )],
            file.data.into_owned(),
        )
            .into_response()
    };
    let out = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&etag) {
        out.insert(header::ETAG, value);
    }
    // Revalidate every time: a demo upgrade must never mix old and new modules.
    out.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    out.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    out.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    // Visitor links carry a session token in the fragment: never leak URLs.
    out.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    out.insert(
        header::X_FRAME_OPTIONS,
        HeaderValue::from_static("SAMEORIGIN"),
    );
    out.insert(
        header::HeaderName::from_static("cross-origin-opener-policy"),
        HeaderValue::from_static("same-origin"),
    );
    out.insert(
        header::HeaderName::from_static("permissions-policy"),
        HeaderValue::from_static("camera=(), microphone=(), geolocation=(), payment=()"),
    );
    response
}

/// The content type of a demo file, with a charset for text.
fn content_type(path: &str) -> &'static str {
    let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    match ext.to_ascii_lowercase().as_str() {
        "html" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "json" => "application/json",
        "webmanifest" => "application/manifest+json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_types_carry_a_charset() {
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(content_type("js/app.js"), "text/javascript; charset=utf-8");
        assert_eq!(content_type("css/app.css"), "text/css; charset=utf-8");
        assert_eq!(content_type("icon.svg"), "image/svg+xml");
        assert_eq!(content_type("x.bin"), "application/octet-stream");
    }

    #[test]
    fn the_pages_are_embedded() {
        for page in ["index.html", "visitor.html", "agent.html"] {
            assert!(Assets::get(page).is_some(), "{page} is embedded");
        }
        assert!(Assets::iter().all(|p| !p.contains("node_modules")));
    }
}
