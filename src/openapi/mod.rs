//! The OpenAPI 3.1 document of the API, generated from the code.
//!
//! - Each operation is declared by `#[utoipa::path]` on its handler (method,
//!   path, parameters, body, success and specific error responses), and the
//!   area's router mounts it with `routes!`, so the route and its operation
//!   are one declaration. Request and response types derive `ToSchema`
//!   where they are defined, so the schemas are the types the handlers use.
//! - What every operation shares is added here, from the route table of the
//!   same router: the scope of each operation (security requirement,
//!   `x-required-scope`, a line in the description), the common errors (401,
//!   403, 429, 500, 503 with the error schema), the rate-limit headers, and
//!   links from creates to the operations on the created record.
//!
//! - The public operations outside `/api/v1` (the visitor widget's) come
//!   from the widget's own router the same way; `public` adds what they
//!   share (no API key; the visitor token's scheme; the per-IP 429). So do
//!   the agent sign-in operations (`/api/v1/auth/…`, outside the key
//!   check); `auth` adds theirs (the session cookie and CSRF header).
//!
//! - The API's rules for every string it is sent (no NUL; a trimmed
//!   required text is not blank) are stated as patterns by `strings`, so a
//!   client generated from the document sends what the API takes.
//!
//! Served without a key at `GET /api/v1/openapi.json`, with Swagger UI
//! (vendored assets, works offline) at `/docs`.

pub mod auth;
pub mod public;
mod refs;
mod strings;
pub use infra::schema;

use std::collections::{BTreeMap, BTreeSet};

use axum::Router;
use utoipa::OpenApi;
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::Operation;
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::schema::Schema;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{ContentBuilder, ObjectBuilder, OpenApi as Document, RefOr, Type};
use utoipa_swagger_ui::SwaggerUi;

use crate::router::{API_PREFIX, RouteSpec};
use crate::state::AppState;

/// The document's own path (no key needed).
pub const DOCUMENT_PATH: &str = "/api/v1/openapi.json";
/// The security scheme's name in the document.
pub const SECURITY_SCHEME: &str = "ApiKey";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "supportdesk API",
        description = "Tickets, live chat, knowledge base and signed webhooks. Every `/api/v1` \
                       request needs an API key in the `X-API-Key` header; each operation names \
                       the scope it requires (`x-required-scope`). Errors always have the shape \
                       `{error, code, status, details?}`. Lists are `{data, total, limit, offset}`, \
                       newest first. The visitor widget's public API (`/widget/v1`) takes no API \
                       key: a public widget key names the entity, and the visitor token a chat \
                       answers (`Authorization: Bearer vt_…`) opens that chat only.",
    ),
    components(schemas(schema::ErrorBody, schema::FieldError)),
    tags(
        (name = "Entities", description = "Groups of records; `parentId` makes subsidiaries"),
        (name = "Users", description = "Agents and admins of the company"),
        (name = "Agent sign-in", description = "An agent signs in as themselves (password, \
            second factor, SSO) and manages their sessions and personal keys: the session \
            cookie, not an API key; each change carries `X-CSRF-Token`"),
        (name = "Roles", description = "Built-in and custom roles: what a user's role lets them do"),
        (name = "API keys", description = "Keys of the company (secrets shown once)"),
        (name = "Audit log", description = "Who did what to the company's security and admin records, in a hash chain"),
        (name = "Tickets", description = "Tickets, comments and their timeline"),
        (name = "Contacts", description = "Contacts (one per person, matched from tickets and chats) and their organisations"),
        (name = "Email channels", description = "The desk's addresses: where their mail comes from (IMAP, provider webhooks) and how replies leave"),
        (name = "Tags", description = "Tags of tickets and chat sessions, with their counts"),
        (name = "Macros", description = "Named changes and replies an agent applies to a ticket in one step"),
        (name = "Automations", description = "Rules that change tickets when an event commits (triggers) or when time has passed (timed)"),
        (name = "Views", description = "Saved ticket lists: named filters and an order, personal or shared"),
        (name = "Teams", description = "Teams of agents and how new chats are routed to them"),
        (name = "Knowledge base", description = "Articles, categories, search and votes"),
        (name = "Chat", description = "Live chat sessions, messages and agent presence"),
        (name = "Webhooks", description = "Signed event deliveries to your URLs"),
        (name = "Settings", description = "Company profile, escalation rules and custom fields"),
        (name = "Reports", description = "Ticket statistics"),
        (name = "Changes", description = "The change feed: every create, update and delete, in commit order"),
        (name = "Widget", description = "The visitor widget: its loader, and the public API it \
            calls with a widget key or a visitor token (no API key; limited per client IP)"),
    )
)]
struct ApiDoc;

/// The served document: `operations` (the handlers' own, with paths
/// relative to `/api/v1`) completed with what every operation shares.
/// `routes` is the route table of the router the operations come from.
/// `public`: the operations outside the API's key check (the widget's,
/// the agent sign-in's), with their full paths.
pub fn document(operations: Document, routes: &[RouteSpec], public: Document) -> Document {
    let mut doc = ApiDoc::openapi().nest(API_PREFIX, operations);
    for spec in routes {
        if let Some(operation) = operation_mut(&mut doc, spec) {
            complete_operation(operation, spec);
        }
    }
    public::add(&mut doc, public);
    auth::complete(&mut doc);
    refs::reference_named_records(&mut doc);
    strings::state_string_rules(&mut doc);
    add_links(&mut doc);
    let components = doc.components.get_or_insert_with(Default::default);
    let scheme = ApiKey::Header(ApiKeyValue::with_description(
        "X-API-Key",
        "An API key (`svc_test_…` or `svc_live_…`); a TEST key sees only test data, a LIVE \
         key only live data.",
    ));
    components.add_security_scheme(SECURITY_SCHEME, SecurityScheme::ApiKey(scheme));
    doc
}

/// The schema names that two different schemas were registered under in
/// `registered` (every handler's (name, schema) pairs): two Rust types
/// that share a name (`UpdateBody` of tickets and of settings) would
/// otherwise collapse into one component, and the document would show one
/// type's body for the other's operation. The document's map keeps one
/// schema per name and says nothing, so the pairs are compared before it.
/// (Two types with one name and identical schemas are not told apart; the
/// document is right for both then.)
pub fn schema_collisions(
    registered: impl IntoIterator<Item = (String, RefOr<Schema>)>,
) -> Vec<String> {
    let mut first: BTreeMap<String, RefOr<Schema>> = BTreeMap::new();
    let mut collisions = BTreeSet::new();
    for (name, schema) in registered {
        match first.get(&name) {
            Some(seen) if *seen != schema => {
                collisions.insert(name);
            }
            Some(_) => {}
            None => {
                first.insert(name, schema);
            }
        }
    }
    collisions.into_iter().collect()
}

/// The schemas the document declares itself (the error body), as
/// (name, schema) pairs for [`schema_collisions`].
pub fn own_schemas() -> Vec<(String, RefOr<Schema>)> {
    ApiDoc::openapi()
        .components
        .map(|components| components.schemas.into_iter().collect())
        .unwrap_or_default()
}

/// Links from each create (`POST P` answering 201 with an `id`) to every
/// operation on `P/{id}…`, so clients and tools (schemathesis' stateful
/// phase) can follow a created record to the operations on it.
fn add_links(doc: &mut Document) {
    use utoipa::openapi::link::LinkBuilder;
    let operations: Vec<(String, String)> = doc
        .paths
        .paths
        .iter()
        .flat_map(|(path, item)| {
            [&item.get, &item.post, &item.put, &item.patch, &item.delete]
                .into_iter()
                .flatten()
                .filter_map(|op| op.operation_id.clone())
                .map(move |id| (path.clone(), id))
                .collect::<Vec<_>>()
        })
        .collect();
    for (path, item) in doc.paths.paths.iter_mut() {
        let Some(create) = item.post.as_mut() else {
            continue;
        };
        let Some(RefOr::T(created)) = create.responses.responses.get_mut("201") else {
            continue;
        };
        let prefix = format!("{path}/{{id}}");
        for (target, operation_id) in &operations {
            if target == &prefix || target.starts_with(&format!("{prefix}/")) {
                let link = LinkBuilder::new()
                    .operation_id(operation_id.clone())
                    .parameter("id", "$response.body#/id")
                    .build();
                created.links.insert(operation_id.clone(), link.into());
            }
        }
    }
}

fn full_path(path: &str) -> String {
    format!("{API_PREFIX}{path}")
}

fn operation_mut<'a>(doc: &'a mut Document, spec: &RouteSpec) -> Option<&'a mut Operation> {
    let item = doc.paths.paths.get_mut(&full_path(&spec.path))?;
    match spec.method.as_str() {
        "GET" => item.get.as_mut(),
        "POST" => item.post.as_mut(),
        "PUT" => item.put.as_mut(),
        "PATCH" => item.patch.as_mut(),
        "DELETE" => item.delete.as_mut(),
        _ => None,
    }
}

/// Scope, security, common errors and rate-limit headers of one operation.
fn complete_operation(operation: &mut Operation, spec: &RouteSpec) {
    let scope = spec.scope.as_str();
    operation.security = Some(vec![SecurityRequirement::new(SECURITY_SCHEME, [scope])]);
    let extensions = ExtensionsBuilder::new()
        .add("x-required-scope", scope)
        .build();
    match &mut operation.extensions {
        Some(existing) => existing.merge(extensions),
        None => operation.extensions = Some(extensions),
    }
    let line = format!("Requires scope `{scope}`.");
    operation.description = Some(match operation.description.take() {
        Some(text) if !text.is_empty() => format!("{text}\n\n{line}"),
        _ => line,
    });

    let has_body = operation.request_body.is_some();
    let has_path_param = spec.path.contains('{');
    let mut common = vec![
        ("401", "Missing, invalid, expired or inactive API key"),
        (
            "403",
            "The key lacks the required scope, or the account is suspended",
        ),
        ("429", "Rate limit exceeded (see `Retry-After`)"),
    ];
    common.extend_from_slice(SERVER_ERRORS);
    // Every operation checks its query string (an undocumented parameter
    // is refused), so any of them may answer 400.
    common.push(API_INVALID_INPUT);
    if has_path_param {
        common.push(("404", "No such record for this key's company and mode"));
    }
    if has_body {
        common.extend_from_slice(BODY_ERRORS);
    }
    add_error_responses(operation, &common);
    if spec.method == axum::http::Method::POST {
        add_idempotency(operation);
    }
    for (status, response) in operation.responses.responses.iter_mut() {
        if let RefOr::T(response) = response {
            add_rate_limit_headers(status, response);
        }
    }
}

/// The errors any operation may answer whatever its input.
pub const SERVER_ERRORS: &[(&str, &str)] = &[
    (
        "500",
        "Internal error (details are in the log, by request id)",
    ),
    (
        "503",
        "`unavailable`: a dependency (the database) is unavailable, retry; `timeout`: a \
         database statement ran past its time limit",
    ),
];

pub const INVALID_INPUT: (&str, &str) = (
    "400",
    "Invalid input (`invalid_json` or `validation_failed`)",
);

/// The 400 of an API operation, which also refuses query parameters it
/// does not document.
const API_INVALID_INPUT: (&str, &str) = (
    "400",
    "Invalid input (`invalid_json` or `validation_failed`); a query parameter the operation \
     does not document is `validation_failed` naming it",
);

/// The errors of an operation that reads a JSON body, beyond invalid input.
pub const BODY_ERRORS: &[(&str, &str)] = &[
    ("413", "Request body exceeds 1 MiB"),
    ("415", "Content-Type must be application/json"),
];

/// Adds each `(status, description)` as an error response unless the
/// operation's own annotation already describes that status.
pub fn add_error_responses(operation: &mut Operation, errors: &[(&str, &str)]) {
    for (status, description) in errors {
        operation
            .responses
            .responses
            .entry((*status).to_string())
            .or_insert_with(|| error_response(description));
    }
}

/// The `Idempotency-Key` header of a POST, its errors, and the
/// `Idempotent-Replayed` header on the answers that are stored and replayed.
fn add_idempotency(operation: &mut Operation) {
    use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
    let key = ParameterBuilder::new()
        .name(crate::idempotency::KEY_HEADER_NAME)
        .parameter_in(ParameterIn::Header)
        .required(utoipa::openapi::Required::False)
        .description(Some(
            "Makes the request safe to retry: a repeat with the same key, method, path and \
             body gets the first answer back (with `Idempotent-Replayed: true`) instead of \
             running again. 1–255 printable ASCII characters; kept 24 hours by default.",
        ))
        .schema(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(1))
                .max_length(Some(crate::idempotency::KEY_MAX_LEN))
                .pattern(Some("^[\\x20-\\x7E]+$"))
                .build(),
        ))
        .build();
    operation
        .parameters
        .get_or_insert_with(Vec::new)
        .push(RefOr::T(key));
    let errors = [
        (
            "400",
            "`validation_failed`: the request is not valid, e.g. a malformed Idempotency-Key \
             (not 1–255 printable ASCII characters, or sent twice)",
        ),
        (
            "409",
            "`idempotency_in_progress`: a request with this Idempotency-Key is still running \
             (retry after `Retry-After`); `idempotency_response_lost`: it was carried out but \
             its answer was lost",
        ),
        (
            "422",
            "`idempotency_key_reused`: the Idempotency-Key was used for another method, path \
             or body",
        ),
    ];
    for (status, description) in errors {
        operation
            .responses
            .responses
            .entry(status.to_string())
            .or_insert_with(|| error_response(description));
    }
    for (status, response) in operation.responses.responses.iter_mut() {
        let replayable = status.starts_with('2')
            || (status.starts_with('4') && !matches!(status.as_str(), "401" | "403" | "429"));
        if let (true, RefOr::T(response)) = (replayable, response) {
            response.headers.insert(
                "Idempotent-Replayed".to_string(),
                HeaderBuilder::new()
                    .schema(Some(ObjectBuilder::new().schema_type(Type::String).build()))
                    .description(Some(
                        "`true` when this is the stored answer to an earlier request with the \
                         same Idempotency-Key",
                    ))
                    .build()
                    .into(),
            );
        }
    }
}

/// A response with the shared error schema.
pub fn error_response(description: &str) -> RefOr<Response> {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(RefOr::Ref(utoipa::openapi::Ref::from_schema_name(
                    "ErrorBody",
                ))))
                .build(),
        )
        .build()
        .into()
}

/// Every response after authentication carries the rate-limit headers;
/// 429 adds `Retry-After`. (401 responses come before the limiter.)
fn add_rate_limit_headers(status: &str, response: &mut Response) {
    if status == "401" {
        return;
    }
    let integer = || ObjectBuilder::new().schema_type(Type::Integer).build();
    let string = || ObjectBuilder::new().schema_type(Type::String).build();
    let headers = [
        (
            "X-RateLimit-Limit",
            integer(),
            "The key's requests per hour",
        ),
        (
            "X-RateLimit-Remaining",
            integer(),
            "Requests left in the allowance",
        ),
        (
            "X-RateLimit-Reset",
            integer(),
            "Whole seconds until the allowance is full again",
        ),
        (
            "RateLimit-Policy",
            string(),
            "IETF draft: `\"default\";q=LIMIT;w=3600`",
        ),
        (
            "RateLimit",
            string(),
            "IETF draft: `\"default\";r=REMAINING;t=RESET`",
        ),
    ];
    for (name, schema, description) in headers {
        response.headers.entry(name.to_string()).or_insert_with(|| {
            HeaderBuilder::new()
                .schema(Some(schema))
                .description(Some(description))
                .build()
                .into()
        });
    }
    if status == "429" {
        response
            .headers
            .entry("Retry-After".to_string())
            .or_insert_with(|| {
                HeaderBuilder::new()
                    .schema(Some(integer()))
                    .description(Some("Whole seconds until the next request is allowed"))
                    .build()
                    .into()
            });
    }
}

/// `GET /api/v1/openapi.json` (no key) serving `document`, and Swagger UI
/// at `/docs`. Mounted beside, not inside, the authenticated `/api/v1` nest.
pub fn router(document: Document) -> Router<AppState> {
    Router::from(SwaggerUi::new("/docs").url(DOCUMENT_PATH, document))
}

#[cfg(test)]
mod tests {
    use utoipa::{PartialSchema, ToSchema};

    use super::*;

    mod tickets {
        #[derive(utoipa::ToSchema)]
        #[expect(dead_code, reason = "only the type's schema is used")]
        pub struct UpdateBody {
            pub status: String,
        }
    }

    mod settings {
        #[derive(utoipa::ToSchema)]
        #[expect(dead_code, reason = "only the type's schema is used")]
        pub struct UpdateBody {
            pub name: String,
        }
    }

    #[test]
    fn two_types_of_one_name_are_a_collision() {
        let registered = vec![
            (
                tickets::UpdateBody::name().into_owned(),
                tickets::UpdateBody::schema(),
            ),
            (
                settings::UpdateBody::name().into_owned(),
                settings::UpdateBody::schema(),
            ),
            // The same type registered twice is no collision.
            (
                tickets::UpdateBody::name().into_owned(),
                tickets::UpdateBody::schema(),
            ),
        ];
        assert_eq!(schema_collisions(registered), ["UpdateBody"]);
    }
}
