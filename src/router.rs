//! Routes are declared with the scope they need, in one place per area:
//! `ApiRouter::new().get("/tickets", Scope::TicketsRead, list)`. The router
//! keeps the table of (method, path, scope), so tests can check every route
//! refuses a key without its scope, and no route exists without one.

use axum::Router;
use axum::extract::Request;
use axum::handler::Handler;
use axum::http::Method;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodFilter, on};

use crate::auth::{Principal, Scope};
use crate::error::ApiError;
use crate::state::AppState;

/// One route of the table: what the scope test and the OpenAPI check read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteSpec {
    pub method: Method,
    /// Path relative to `/api/v1`, with `{param}` segments.
    pub path: &'static str,
    pub scope: Scope,
}

#[derive(Default)]
pub struct ApiRouter {
    router: Router<AppState>,
    specs: Vec<RouteSpec>,
}

impl ApiRouter {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn get<H, T>(self, path: &'static str, scope: Scope, handler: H) -> Self
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        self.add(Method::GET, path, scope, handler)
    }

    pub fn post<H, T>(self, path: &'static str, scope: Scope, handler: H) -> Self
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        self.add(Method::POST, path, scope, handler)
    }

    pub fn put<H, T>(self, path: &'static str, scope: Scope, handler: H) -> Self
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        self.add(Method::PUT, path, scope, handler)
    }

    pub fn patch<H, T>(self, path: &'static str, scope: Scope, handler: H) -> Self
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        self.add(Method::PATCH, path, scope, handler)
    }

    pub fn delete<H, T>(self, path: &'static str, scope: Scope, handler: H) -> Self
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        self.add(Method::DELETE, path, scope, handler)
    }

    fn add<H, T>(mut self, method: Method, path: &'static str, scope: Scope, handler: H) -> Self
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        let filter = MethodFilter::try_from(method.clone()).unwrap_or(MethodFilter::GET);
        let route = on(filter, handler).route_layer(middleware::from_fn(
            move |request: Request, next: Next| require_scope(scope, request, next),
        ));
        self.router = self.router.route(path, route);
        self.specs.push(RouteSpec {
            method,
            path,
            scope,
        });
        self
    }

    pub fn merge(mut self, other: ApiRouter) -> Self {
        self.router = self.router.merge(other.router);
        self.specs.extend(other.specs);
        self
    }

    pub fn into_parts(self) -> (Router<AppState>, Vec<RouteSpec>) {
        (self.router, self.specs)
    }
}

async fn require_scope(scope: Scope, request: Request, next: Next) -> Response {
    match request.extensions().get::<Principal>() {
        Some(principal) if principal.scopes.contains(scope) => next.run(request).await,
        Some(_) => ApiError::forbidden_scope(scope.as_str()).into_response(),
        // The auth middleware runs first; reaching here without a principal
        // means a route was mounted outside it, which must not serve data.
        None => ApiError::forbidden_scope(scope.as_str()).into_response(),
    }
}
