//! The router with its middleware stack: every route of the service, the
//! layers each request passes, and the answers of the stack itself.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{Route, any, get};
use tower::layer::util::Identity;
use tower::{Layer, Service, ServiceBuilder};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;

use super::api_routes;
use crate::client_address::ClientAddress;
use crate::db::Db;
use crate::error::ApiError;
use crate::redis_conn::RedisConn;
use crate::router::{API_CATCH_ALL, API_PREFIX, BODY_LIMIT};
use crate::state::AppState;

pub(super) fn router(state: AppState, shop_url: Option<Arc<str>>) -> Router {
    let (api, operations, specs) = api_routes().into_parts();
    let document = crate::openapi::document(operations, &specs, super::public_operations());
    // A path under the API that no route serves is answered by the API's
    // own catch-all, behind authentication like every API route: a key
    // learns nothing of which paths exist, and its response carries the
    // rate-limit headers.
    let not_found = any(|| async { ApiError::not_found_response() });
    let api = api
        .route(API_PREFIX, not_found.clone())
        .route(&format!("{API_PREFIX}/"), not_found.clone())
        .route(API_CATCH_ALL, not_found)
        .method_not_allowed_fallback(method_not_allowed);

    let demo_enabled = shop_url.is_some();
    let public = Router::new()
        .route(
            "/",
            get(move || async move { crate::home::page(demo_enabled) }),
        )
        .merge(crate::console::router())
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .merge(crate::realtime::workers::public_routes())
        // SSO's start and callback: an agent's browser, before any credential.
        .merge(crate::sso::flow::router())
        .merge(crate::openapi::router(document));
    // The demo's pages and its token route exist only with the demo enabled.
    let public = match shop_url {
        Some(shop_url) => public.merge(crate::demo::router(shop_url)),
        None => public,
    };
    let public = public
        .merge(crate::widget::router(
            state.config.widget_request_rate,
            state.config.widget_session_rate,
        ))
        .merge(crate::attachments::files::router())
        .merge(crate::contacts::requests::downloads())
        .merge(crate::accounts::routes::router())
        // A mail provider's posts: authenticated by the provider's
        // signature or the channel's secret, not a key.
        .merge(crate::email::webhooks::router(
            state.config.max_attachment_bytes,
        ))
        .fallback(|| async { ApiError::not_found_response() })
        .method_not_allowed_fallback(method_not_allowed);

    // Each group's whole stack in one `layer` call (see `stacked`). The
    // state as an extension too, for route layers declared before the state
    // exists (the idempotency layer of `ApiRouter::route`).
    let with_state = ServiceBuilder::new().layer(axum::Extension(state.clone()));
    let public_stack = with_state.clone();
    let api_stack = with_state.layer(middleware::from_fn_with_state(state.clone(), authenticate));
    stacked(public, public_stack)
        .merge(stacked(api, api_stack))
        .with_state(state)
}

async fn method_not_allowed() -> Response {
    ApiError::from_status(StatusCode::METHOD_NOT_ALLOWED).into_response()
}

/// The middleware every route gets, outermost first: request metrics (so
/// they see the status the client gets), request ids, tracing, panics and
/// every other failure turned into our JSON error shape, the body limit.
pub fn layered(routes: Router<AppState>) -> Router<AppState> {
    stacked(routes, Identity::new())
}

/// `layered`'s middleware with `inner` inside it, in one `layer` call.
///
/// axum boxes each route once per `layer` call, and a request entering a
/// box clones every box below it (`Route::call` clones its service), so a
/// route under n boxes costs n(n+1)/2 clones and as many drops per request.
/// Callgrind of a one-row GET put those at a fifth of its instructions with
/// one box per middleware.
fn stacked<L>(routes: Router<AppState>, inner: L) -> Router<AppState>
where
    L: Layer<Route> + Clone + Send + Sync + 'static,
    L::Service:
        Service<Request, Response = Response, Error = Infallible> + Clone + Send + Sync + 'static,
    <L::Service as Service<Request>>::Future: Send + 'static,
{
    let request_id = HeaderName::from_static("x-request-id");
    routes.layer(
        ServiceBuilder::new()
            .layer(middleware::from_fn(crate::metrics::http::track))
            .layer(SetRequestIdLayer::new(request_id.clone(), MakeRequestUuid))
            .layer(
                TraceLayer::new_for_http().make_span_with(|request: &Request| {
                    let id = request
                        .headers()
                        .get("x-request-id")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("");
                    let client = ClientAddress(ClientAddress::of(request.extensions()));
                    // The path only: query strings may carry socket tokens.
                    tracing::info_span!(
                        "request",
                        method = %request.method(),
                        path = %request.uri().path(),
                        request_id = %id,
                        client = %client,
                    )
                }),
            )
            .layer(PropagateRequestIdLayer::new(request_id))
            .layer(CatchPanicLayer::custom(|_| {
                ApiError::internal().into_response()
            }))
            .layer(middleware::from_fn(json_errors))
            .layer(DefaultBodyLimit::max(BODY_LIMIT))
            .layer(inner),
    )
}

/// The API's authentication.
async fn authenticate(State(state): State<AppState>, request: Request, next: Next) -> Response {
    crate::auth::middleware::authenticate(&state.access, &state.db, request, next).await
}

/// Safety net: any error response that is not JSON (a rejection or a
/// middleware's plain text) is replaced by our error shape, keeping headers.
async fn json_errors(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if (status.is_client_error() || status.is_server_error()) && !is_json {
        let (parts, _) = response.into_parts();
        let mut replaced = ApiError::from_status(status).into_response();
        for (name, value) in parts.headers.iter() {
            if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
                replaced.headers_mut().insert(name.clone(), value.clone());
            }
        }
        return replaced;
    }
    response
}

async fn readyz(State(db): State<Db>, State(redis): State<Option<RedisConn>>) -> Response {
    let store = db.ping().await;
    let redis = match redis {
        None => None,
        Some(mut conn) => Some(
            tokio::time::timeout(
                Duration::from_secs(2),
                redis::cmd("PING").query_async::<String>(&mut conn),
            )
            .await
            .is_ok_and(|r| r.is_ok()),
        ),
    };
    let ready = store && redis.unwrap_or(true);
    let body = serde_json::json!({
        "ready": ready,
        "store": if store { "ok" } else { "unavailable" },
        "redis": match redis { None => "not configured", Some(true) => "ok", Some(false) => "unavailable" },
    });
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let mut response = (status, axum::Json(body)).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
