//! The agent sign-in operations (`/api/v1/auth/…`): mounted beside the API,
//! outside its key check, so they share none of its scopes or rate-limit
//! headers. What they share is added here: the session cookie and the CSRF
//! header as security schemes (every operation but the ones that sign in),
//! and the errors of a session, a JSON body and the server.

use utoipa::openapi::OpenApi as Document;
use utoipa::openapi::path::Operation;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityRequirement, SecurityScheme};

/// The paths of the operations completed here.
const AUTH_PREFIX: &str = "/api/v1/auth/";
/// The session cookie's security scheme.
pub const SESSION_SCHEME: &str = "SessionCookie";
/// The CSRF header's security scheme.
pub const CSRF_SCHEME: &str = "CsrfToken";

/// The operations that need no session: they start one, or set a password
/// by an emailed link.
const WITHOUT_SESSION: &[&str] = &[
    "/api/v1/auth/login",
    "/api/v1/auth/password-reset",
    "/api/v1/auth/password-reset/confirm",
    "/api/v1/auth/invitations/accept",
    "/api/v1/auth/sso/{slug}/start",
    "/api/v1/auth/sso/callback",
];

/// Completes every operation under `/api/v1/auth/` in `doc` and adds the
/// session's security schemes.
pub fn complete(doc: &mut Document) {
    for (path, item) in doc.paths.paths.iter_mut() {
        if !path.starts_with(AUTH_PREFIX) {
            continue;
        }
        let with_session = !WITHOUT_SESSION.contains(&path.as_str());
        // (whether the method changes anything, the operation)
        let methods = [
            (false, &mut item.get),
            (true, &mut item.post),
            (true, &mut item.delete),
        ];
        for (changes, operation) in methods {
            if let Some(operation) = operation {
                complete_operation(operation, path, with_session, changes);
            }
        }
    }
    let components = doc.components.get_or_insert_with(Default::default);
    let cookie = ApiKey::Cookie(ApiKeyValue::with_description(
        crate::auth::session::COOKIE,
        "An agent's session, set by signing in (`POST /api/v1/auth/login`, an accepted \
         invitation, SSO): `HttpOnly`, `SameSite=Lax`.",
    ));
    components.add_security_scheme(SESSION_SCHEME, SecurityScheme::ApiKey(cookie));
    let csrf = ApiKey::Header(ApiKeyValue::with_description(
        "X-CSRF-Token",
        "The session's `csrfToken` (`GET /api/v1/auth/me`): every request made with the \
         session cookie that changes anything carries it, or is 403 `csrf_failed`.",
    ));
    components.add_security_scheme(CSRF_SCHEME, SecurityScheme::ApiKey(csrf));
}

fn complete_operation(operation: &mut Operation, path: &str, with_session: bool, changes: bool) {
    let mut common: Vec<(&str, &str)> = super::SERVER_ERRORS.to_vec();
    if with_session {
        let schemes: Vec<&str> = if changes {
            vec![SESSION_SCHEME, CSRF_SCHEME]
        } else {
            vec![SESSION_SCHEME]
        };
        let requirement = schemes
            .into_iter()
            .fold(SecurityRequirement::default(), |req, scheme| {
                req.add(scheme, Vec::<String>::new())
            });
        operation.security = Some(vec![requirement]);
        common.push((
            "401",
            "`sign_in_required`: no session cookie; `session_expired`: the session ended, \
             idled out or is unknown",
        ));
        common.push((
            "403",
            "`csrf_failed`: a change without the session's `X-CSRF-Token`; or the company is \
             suspended",
        ));
    }
    if path.contains('{') {
        common.push(("404", "No such record"));
    }
    if operation.request_body.is_some() {
        common.push(super::INVALID_INPUT);
        common.extend_from_slice(super::BODY_ERRORS);
    } else if operation.parameters.as_ref().is_some_and(|p| !p.is_empty()) {
        common.push(super::INVALID_INPUT);
    }
    super::add_error_responses(operation, &common);
}
