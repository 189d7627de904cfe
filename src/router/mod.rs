//! Routes are declared with the scope they need, in one place per area:
//! `ApiRouter::new().route(Scope::TicketsRead, routes!(list))`. The method
//! and path come from the handler's `#[utoipa::path]`, so the route, its
//! scope and its OpenAPI operation are one declaration. The router keeps the
//! table of (method, path, scope), so tests can check every route refuses a
//! key without its scope, and the document names each operation's scope.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::Method;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Router};
use tower::ServiceBuilder;
use utoipa::openapi::schema::Schema;
use utoipa::openapi::{Components, OpenApi as Document, PathItem, RefOr};
use utoipa_axum::router::UtoipaMethodRouter;

use crate::auth::{Principal, Scope};
use crate::error::ApiError;
use crate::idempotency::BodyLimit;
use crate::query_params::RouteParams;
use crate::state::AppState;

pub mod paths;
pub use paths::{API_CATCH_ALL, API_PREFIX, BODY_LIMIT};

/// One route of the table: what the scope test and the document read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteSpec {
    pub method: Method,
    /// Path relative to `/api/v1`, with `{param}` segments.
    pub path: String,
    pub scope: Scope,
}

#[derive(Default)]
pub struct ApiRouter {
    router: Router<AppState>,
    /// Paths relative to [`API_PREFIX`]. It starts empty: what every
    /// operation shares is added by `openapi::document`.
    document: Document,
    specs: Vec<RouteSpec>,
    /// Every schema the handlers registered, by name, before the
    /// document's map keeps one per name (`openapi::schema_collisions`
    /// reads them).
    schemas: Vec<(String, RefOr<Schema>)>,
}

impl ApiRouter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Mounts the handler of `routes!(handler)` at its documented method
    /// and path, behind a check that the key holds `scope`.
    pub fn route(self, scope: Scope, handler: UtoipaMethodRouter<AppState>) -> Self {
        self.route_or(scope, &[], handler)
    }

    /// Like `route`, but a key holding one of `also` passes the check too:
    /// the handler then decides what such a key may see (a download by the
    /// read scope of the record a file belongs to). The table and the
    /// document name `scope`.
    pub fn route_or(
        self,
        scope: Scope,
        also: &'static [Scope],
        handler: UtoipaMethodRouter<AppState>,
    ) -> Self {
        self.mount(scope, also, BodyLimit::Service, handler)
    }

    /// Like `route`, for an upload: a keyed POST's body may be as large as
    /// an attachment (the idempotency layer reads it whole).
    pub fn route_upload(self, scope: Scope, handler: UtoipaMethodRouter<AppState>) -> Self {
        self.mount(scope, &[], BodyLimit::Upload, handler)
    }

    fn mount(
        mut self,
        scope: Scope,
        also: &'static [Scope],
        body: BodyLimit,
        handler: UtoipaMethodRouter<AppState>,
    ) -> Self {
        let (schemas, paths, method_router) = handler;
        let params = Arc::new(RouteParams::of_items(paths.paths.values()));
        let mut has_post = false;
        for (path, item) in &paths.paths {
            for method in methods(item) {
                has_post |= method == Method::POST;
                self.specs.push(RouteSpec {
                    method,
                    path: path.clone(),
                    scope,
                });
            }
        }
        // Outermost first: the scope check and the query parameters' check,
        // then (POSTs) the idempotency layer, then the handler. One
        // `route_layer` call for them: each call boxes the route once more,
        // and every request clones and drops every box.
        let check = move |request: Request, next: Next| {
            check_route(scope, also, params.clone(), request, next)
        };
        let method_router = if has_post {
            method_router.route_layer(
                ServiceBuilder::new()
                    .layer(middleware::from_fn(check))
                    .layer(middleware::from_fn(
                        move |state: Extension<AppState>, request: Request, next: Next| {
                            crate::idempotency::guard(body, state, request, next)
                        },
                    )),
            )
        } else {
            method_router.route_layer(middleware::from_fn(check))
        };
        for path in paths.paths.keys() {
            let full = format!("{API_PREFIX}{path}");
            self.router = self.router.route(&full, method_router.clone());
        }
        self.document.paths.merge(paths);
        self.document
            .components
            .get_or_insert_with(Components::new)
            .schemas
            .extend(schemas.iter().cloned());
        self.schemas.extend(schemas);
        self
    }

    pub fn merge(mut self, other: ApiRouter) -> Self {
        self.router = self.router.merge(other.router);
        self.document.merge(other.document);
        self.specs.extend(other.specs);
        self.schemas.extend(other.schemas);
        self
    }

    /// Every schema the handlers registered, as (name, schema) pairs.
    pub fn registered_schemas(&self) -> &[(String, RefOr<Schema>)] {
        &self.schemas
    }

    /// The axum router (routes at their full paths), the operations of its
    /// handlers (paths relative to [`API_PREFIX`]) and the route table.
    pub fn into_parts(self) -> (Router<AppState>, Document, Vec<RouteSpec>) {
        (self.router, self.document, self.specs)
    }
}

/// The methods a path item has operations for.
fn methods(item: &PathItem) -> Vec<Method> {
    [
        (Method::GET, &item.get),
        (Method::POST, &item.post),
        (Method::PUT, &item.put),
        (Method::PATCH, &item.patch),
        (Method::DELETE, &item.delete),
        (Method::HEAD, &item.head),
        (Method::OPTIONS, &item.options),
        (Method::TRACE, &item.trace),
    ]
    .into_iter()
    .filter(|(_, operation)| operation.is_some())
    .map(|(method, _)| method)
    .collect()
}

/// The scope check (403), then the query string's (400: a parameter the
/// operation does not document, or too many filter values).
async fn check_route(
    scope: Scope,
    also: &'static [Scope],
    params: Arc<RouteParams>,
    request: Request,
    next: Next,
) -> Response {
    if let Some(refused) = refused_scope(scope, also, &request) {
        return refused;
    }
    if let Err(invalid) = params.check(request.method(), request.uri().query()) {
        return invalid.into_response();
    }
    next.run(request).await
}

/// The 403 for a request whose principal holds neither `scope` nor one of
/// `also`. No principal holds none: the auth middleware runs first, so a
/// request without one reached a route mounted outside it, which must not
/// serve data.
fn refused_scope(scope: Scope, also: &[Scope], request: &Request) -> Option<Response> {
    let held = request
        .extensions()
        .get::<Principal>()
        .is_some_and(|principal| {
            principal.scopes.contains(scope)
                || also.iter().any(|other| principal.scopes.contains(*other))
        });
    (!held).then(|| ApiError::forbidden_scope(scope.as_str()).into_response())
}
