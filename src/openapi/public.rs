//! The public operations outside `/api/v1`: the visitor widget's API, its
//! loader and its frame. They take no API key: a widget key names the
//! entity, and a visitor token (`vt_…`, from starting a chat) opens one
//! chat. What they share is added here, as `document` does for the API's.

use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::Operation;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::openapi::{ObjectBuilder, OpenApi as Document, RefOr, Type};

/// The visitor token's security scheme in the document.
pub const VISITOR_TOKEN_SCHEME: &str = "VisitorToken";
/// The public widget API's paths start with it.
const WIDGET_API_PREFIX: &str = "/widget/v1/";

/// Adds the `public` operations (full paths) to `doc`, with the errors
/// every widget API operation shares and the visitor token's scheme.
pub fn add(doc: &mut Document, public: Document) {
    doc.merge(public);
    for (path, item) in doc.paths.paths.iter_mut() {
        if !path.starts_with(WIDGET_API_PREFIX) {
            continue;
        }
        for operation in [&mut item.get, &mut item.post].into_iter().flatten() {
            complete_operation(operation);
            if takes_idempotency_key(operation) {
                super::add_idempotency(operation);
            }
        }
    }
    let mut scheme = Http::new(HttpAuthScheme::Bearer);
    scheme.bearer_format = Some("vt_…".into());
    scheme.description = Some(
        "A visitor token (`Authorization: Bearer vt_…`), answered by \
         `POST /widget/v1/sessions`: it opens that chat only."
            .into(),
    );
    doc.components
        .get_or_insert_with(Default::default)
        .add_security_scheme(VISITOR_TOKEN_SCHEME, SecurityScheme::Http(scheme));
}

/// Whether the handler's annotation names the `Idempotency-Key` header; it
/// is then removed, for `add_idempotency` to state it as on every API POST.
fn takes_idempotency_key(operation: &mut Operation) -> bool {
    let Some(parameters) = operation.parameters.as_mut() else {
        return false;
    };
    let before = parameters.len();
    parameters.retain(|parameter| {
        !matches!(parameter, RefOr::T(p) if p.name == crate::idempotency::KEY_HEADER_NAME)
    });
    parameters.len() < before
}

/// The per-IP limit's 429 (every widget API request counts), the server's
/// own errors, and a JSON body's errors.
fn complete_operation(operation: &mut Operation) {
    let mut common = vec![(
        "429",
        "`rate_limited`: too many requests from this client IP (or, for chats and \
         uploads, too many started or uploaded); see `Retry-After`",
    )];
    common.extend_from_slice(super::SERVER_ERRORS);
    let json_body = matches!(
        &operation.request_body,
        Some(RefOr::T(body)) if body.content.contains_key("application/json")
    );
    if json_body {
        common.push(super::INVALID_INPUT);
        common.extend_from_slice(super::BODY_ERRORS);
    }
    super::add_error_responses(operation, &common);
    if let Some(RefOr::T(limited)) = operation.responses.responses.get_mut("429") {
        limited
            .headers
            .entry("Retry-After".into())
            .or_insert_with(|| {
                HeaderBuilder::new()
                    .schema(Some(
                        ObjectBuilder::new().schema_type(Type::Integer).build(),
                    ))
                    .description(Some("Whole seconds until the next request is allowed"))
                    .build()
                    .into()
            });
    }
}
