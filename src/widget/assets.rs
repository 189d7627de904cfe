//! The embeddable widget: `/widget.js`, the loader a customer's page
//! includes with one script tag, and `/widget/…`, the chat that the loader
//! opens in an iframe from our origin (so the host page's CSS and scripts
//! cannot touch it, nor ours the page). Files from `web-demo/widget/`,
//! embedded in the binary.

use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rust_embed::RustEmbed;
use tower_http::compression::CompressionLayer;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

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

/// The loader and the frame are documented (they are what an integrator
/// uses); the frame's own scripts, styles and strings are not.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(loader))
        .routes(routes!(frame))
        .route(
            "/widget/{*path}",
            get(|Path(path): Path<String>, headers: HeaderMap| async move {
                serve(&path, &headers)
            }),
        )
        .layer(CompressionLayer::new())
}

/// The loader script (embed it)
///
/// `<script src="…/widget.js" data-widget-key="wk_live_…" async></script>`
/// on any page: it adds the launcher and opens the chat in an iframe of
/// `/widget/frame.html`. Cached for five minutes, revalidated by ETag.
#[utoipa::path(get, path = "/widget.js", operation_id = "widget_loader", tag = "Widget",
    params(("If-None-Match" = Option<String>, Header, description = "An ETag held")),
    responses(
        (status = 200, description = "The loader", body = String,
            content_type = "text/javascript",
            headers(("ETag" = String), ("Cache-Control" = String))),
        (status = 304, description = "Not modified since the ETag held")))]
async fn loader(headers: HeaderMap) -> Response {
    serve("widget.js", &headers)
}

/// The chat frame the loader opens
///
/// Served with a CSP that lets any site embed it (`frame-ancestors *`)
/// while it runs only our scripts and talks only to our origin.
#[utoipa::path(get, path = "/widget/frame.html", operation_id = "widget_frame", tag = "Widget",
    params(("If-None-Match" = Option<String>, Header, description = "An ETag held")),
    responses(
        (status = 200, description = "The frame's page", body = String,
            content_type = "text/html",
            headers(("ETag" = String), ("Cache-Control" = String),
                ("Content-Security-Policy" = String))),
        (status = 304, description = "Not modified since the ETag held")))]
async fn frame(headers: HeaderMap) -> Response {
    serve("frame.html", &headers)
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
