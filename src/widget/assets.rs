//! The embeddable widget: `/widget.js`, the loader a customer's page
//! includes with one script tag, and `/widget/…`, the chat that the loader
//! opens in an iframe from our origin (so the host page's CSS and scripts
//! cannot touch it, nor ours the page). Files from `web-demo/widget/`,
//! embedded in the binary.

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rust_embed::RustEmbed;
use tower_http::compression::CompressionLayer;

use crate::error::ApiError;
use crate::state::AppState;

#[derive(RustEmbed)]
#[folder = "web-demo/widget/"]
struct Assets;

/// The frame may be embedded by any site (that is its purpose); it runs
/// only our scripts and talks only to our origin.
const FRAME_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
    frame-ancestors *; object-src 'none'";

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/widget.js",
            get(|headers: HeaderMap| async move { serve("widget.js", &headers) }),
        )
        .route(
            "/widget/{*path}",
            get(|Path(path): Path<String>, headers: HeaderMap| async move {
                serve(&path, &headers)
            }),
        )
        .layer(CompressionLayer::new())
}

/// One embedded file with an ETag; pages get the frame's headers, and every
/// file may be cached briefly (a release reaches every site within minutes).
fn serve(path: &str, headers: &HeaderMap) -> Response {
    let Some(mut response) = crate::embedded::serve::<Assets>(path, headers) else {
        return ApiError::not_found().into_response();
    };
    let out = response.headers_mut();
    out.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    out.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    // The loader runs on other sites: they may fetch it from anywhere.
    out.insert(
        header::HeaderName::from_static("cross-origin-resource-policy"),
        HeaderValue::from_static("cross-origin"),
    );
    if path.ends_with(".html") {
        out.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(FRAME_CSP),
        );
        out.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        );
    }
    response
}
