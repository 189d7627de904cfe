//! The web demo at `/demo/`, served only when the demo is enabled
//! (`serve --demo`): a made-up shop that embeds the widget (on its own
//! port, see `shop`), a standalone visitor page and an agent console, plain
//! HTML/CSS/JS from `web-demo/public/`, embedded in the binary (so `cargo
//! install` carries it) and served with strict security headers.

pub mod shop;
mod store;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use rust_embed::RustEmbed;

use crate::db::Db;
use crate::error::ApiError;
use crate::state::{AppState, PublicUrl};

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

/// The demo's routes on the API's origin, only when the demo is enabled
/// (`shop_url`: where its shop runs): without it every `/demo/` path is a
/// 404, so a production service shows no widget key and signs nothing.
/// `/demo/` leads to the shop on its own origin; the shop's token route
/// exists here too.
pub fn router(shop_url: Arc<str>) -> Router<AppState> {
    Router::new()
        .route("/demo", get(|| async { Redirect::permanent("/demo/") }))
        .route(
            "/demo/",
            get(move || {
                let shop_url = shop_url.clone();
                async move { Redirect::to(&format!("{shop_url}/")) }
            }),
        )
        .route(
            "/demo/{*path}",
            get(
                |State(db): State<Db>,
                 State(PublicUrl(public_url)): State<PublicUrl>,
                 Path(path): Path<String>,
                 headers: HeaderMap| async move {
                    if path == "index.html" {
                        shop::page(&db, &public_url).await
                    } else {
                        serve(&path, &headers)
                    }
                },
            ),
        )
        .route("/demo/identity-token", post(shop::identity_token))
}

/// One embedded file with its content type, an ETag (its SHA-256) for
/// cheap revalidation, and the security headers. The agent console at
/// `/app/` (`crate::console`) is served from these files too.
pub(crate) fn serve(path: &str, headers: &HeaderMap) -> Response {
    let path = if path.is_empty() || path.ends_with('/') {
        format!("{path}index.html")
    } else {
        path.to_string()
    };
    let Some(mut response) = crate::embedded::serve::<Assets>(&path, headers) else {
        return ApiError::not_found().into_response();
    };
    let out = response.headers_mut();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pages_are_embedded() {
        for page in ["index.html", "visitor.html", "agent.html", "js/shop.js"] {
            assert!(Assets::get(page).is_some(), "{page} is embedded");
        }
        assert!(Assets::iter().all(|p| !p.contains("node_modules")));
    }
}
