//! The web demo (`/demo/`): visitor widget and agent console, embedded.

use axum::Router;
use axum::response::Html;
use axum::routing::get;

use crate::app::AppState;

pub fn router() -> Router<AppState> {
    Router::new().route(
        "/demo/",
        get(|| async {
            Html("<!doctype html><title>supportdesk demo</title><h1>supportdesk</h1>")
        }),
    )
}
