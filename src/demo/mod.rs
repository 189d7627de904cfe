//! The web demo at `/demo/`: a made-up shop that embeds the widget (on its
//! own port when the demo is enabled, see `shop`), a standalone visitor
//! page and an agent console, plain HTML/CSS/JS from `web-demo/public/`,
//! embedded in the binary (so `cargo install` carries it) and served with
//! strict security headers.

pub mod shop;
mod store;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
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

/// `shop_url`: where the shop runs when the demo is enabled. Then `/demo/`
/// leads there and the shop's token route exists here too; without it
/// `/demo/` shows the shop on this origin and there is no token route.
pub fn router(shop_url: Option<Arc<str>>) -> Router<AppState> {
    let landing = shop_url.clone();
    let routes =
        Router::new()
            .route("/demo", get(|| async { Redirect::permanent("/demo/") }))
            .route(
                "/demo/",
                get(move |State(state): State<AppState>| {
                    let landing = landing.clone();
                    async move { shop_or_redirect(&state, landing.as_deref()).await }
                }),
            )
            .route(
                "/demo/{*path}",
                get(
                    |State(state): State<AppState>,
                     Path(path): Path<String>,
                     headers: HeaderMap| async move {
                        if path == "index.html" {
                            shop::page(&state, &state.public_url).await
                        } else {
                            serve(&path, &headers)
                        }
                    },
                ),
            );
    if shop_url.is_some() {
        routes.route("/demo/identity-token", post(shop::identity_token))
    } else {
        // No such route: a 404, not the 405 that the file paths would answer.
        routes.route(
            "/demo/identity-token",
            post(|| async { ApiError::not_found() }),
        )
    }
}

/// The shop on its own origin when it runs, else on this one (the widget
/// then works same-origin, which a customer's site never is).
async fn shop_or_redirect(state: &AppState, shop_url: Option<&str>) -> Response {
    match shop_url {
        Some(url) => Redirect::to(&format!("{url}/")).into_response(),
        None => shop::page(state, &state.public_url).await,
    }
}

/// One embedded file with its content type, an ETag (its SHA-256) for
/// cheap revalidation, and the security headers.
fn serve(path: &str, headers: &HeaderMap) -> Response {
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
