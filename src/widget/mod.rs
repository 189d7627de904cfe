//! The public visitor widget API (`/widget/v1`): what a browser on a
//! customer's site may do with an entity's public widget key, never an API
//! key. Open to any origin (CORS) and rate-limited per client IP. Everything
//! else a widget does goes through `/api/v1/ws?token=` with its visitor token.

pub mod access;
mod assets;
mod idempotent;
pub mod identity;
mod kb;
mod limits;
pub mod revoke;
mod routes;
pub mod secret;
pub mod store;
mod suggestions;
mod target;
mod tokens;
mod visitors;

use std::time::Duration;

use axum::Router;
use axum::http::{HeaderName, HeaderValue, Method, header};
use tower_http::cors::{Any, CorsLayer};
use tower_http::set_header::SetResponseHeaderLayer;

use crate::config::MessageRate;
use crate::state::AppState;

/// The widget's routes: the `/widget/v1` API, the loader and the frame.
pub fn router(request_rate: MessageRate, session_rate: MessageRate) -> Router<AppState> {
    let (api, _) = routes::router().split_for_parts();
    let (assets, _) = assets::router().split_for_parts();
    layered(api, request_rate, session_rate).merge(assets)
}

/// The OpenAPI operations of `router`'s routes (full paths), from the same
/// declarations.
pub fn operations() -> utoipa::openapi::OpenApi {
    routes::router().merge(assets::router()).split_for_parts().1
}

/// Every schema the handlers of the widget API register (see
/// `openapi::schema_collisions`).
pub fn registered_schemas() -> Vec<(
    String,
    utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
)> {
    routes::registered_schemas()
}

/// The `/widget/v1` routes with their own layers: the per-IP limit inside,
/// CORS outside (so preflights are answered at once and even a 429 is
/// readable by the page), and `no-store` on every answer.
fn layered(
    api: Router<AppState>,
    request_rate: MessageRate,
    session_rate: MessageRate,
) -> Router<AppState> {
    let cors = CorsLayer::new()
        .allow_origin(Any)
        .allow_methods([Method::GET, Method::POST])
        .allow_headers([
            header::CONTENT_TYPE,
            header::AUTHORIZATION,
            HeaderName::from_static(crate::idempotency::KEY_HEADER),
        ])
        .expose_headers([
            header::RETRY_AFTER,
            HeaderName::from_static("x-request-id"),
            HeaderName::from_static(crate::idempotency::REPLAYED_HEADER),
        ])
        .max_age(Duration::from_secs(600));
    api.layer(axum::middleware::from_fn_with_state(
        limits::WidgetLimits::new(request_rate, session_rate),
        limits::limit,
    ))
    .layer(SetResponseHeaderLayer::overriding(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-store"),
    ))
    .layer(cors)
}
