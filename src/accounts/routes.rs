//! `/api/v1/auth`: an agent signs in with email and password, and sees and
//! ends their sessions. Mounted beside the API rather than behind its key
//! authentication: signing in needs no credential, and the routes that need
//! a session take it from the cookie (`SignedIn`).

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AccountDeps;
use super::sessions::{self as store, SessionInfo};
use super::sign_in;
use super::signed_in::{Client, SignedIn, cleared_cookie, secure_cookies};
use super::start::{Me, end_presented_session, me_of, no_store, start_session};
use crate::auth::access::Access;
use crate::auth::{Mode, session};
use crate::db::Db;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Id, Json, Requested};
use crate::openapi::schema::ErrorBody;
use crate::state::AppState;
use crate::time::Clock;

/// The `/api/v1/auth` routes.
pub fn router() -> Router<AppState> {
    documented().split_for_parts().0
}

/// Their OpenAPI operations (full paths), from the same declarations; what
/// they share is added by `openapi::auth`.
pub fn operations() -> utoipa::openapi::OpenApi {
    documented().split_for_parts().1
}

/// The routes with their operations: each handler's `#[utoipa::path]`
/// gives its method and path.
fn documented() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(login))
        .routes(routes!(logout))
        .routes(routes!(me))
        .routes(routes!(list_sessions, end_other_sessions))
        .routes(routes!(end_session))
        .merge(super::links::router())
        .merge(super::keys::router())
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = SignIn)]
#[serde(rename_all = "camelCase")]
struct Login {
    #[schema(value_type = String, format = Email, required)]
    email: Option<String>,
    #[schema(value_type = String, required)]
    password: Option<String>,
    /// The second factor's current code (or an unused recovery code), when
    /// the account has one.
    totp: Option<String>,
    /// `live` (the default) or `test`: which mode's data the session sees.
    #[schema(schema_with = mode_name)]
    mode: Option<String>,
}

fn mode_name() -> utoipa::openapi::ObjectBuilder {
    crate::openapi::schema::enum_of(&["live", "test"])
}

/// Sign in with a password
///
/// Answers the agent and a `Set-Cookie: sd_session=…` (a fresh session:
/// any session the browser came with ends). An unknown email and a wrong
/// password get the same 401 `invalid_credentials`; a missing second factor
/// is 401 `totp_required`; too many failures for the account or the client
/// are 429 `rate_limited` with `Retry-After`; a company that signs in with
/// SSO only is 403 `sso_required`.
#[utoipa::path(post, path = "/api/v1/auth/login", operation_id = "sign_in",
    tag = "Agent sign-in",
    request_body = Login,
    responses(
        (status = 200, description = "Signed in", body = Me,
            headers(("Set-Cookie" = String, description = "The session cookie `sd_session`"))),
        (status = 401, description = "`invalid_credentials` or `totp_required`", body = ErrorBody),
        (status = 403, description = "`sso_required`: the company signs in with SSO only",
            body = ErrorBody),
        (status = 429, description = "`rate_limited`: too many failed sign-ins; see `Retry-After`",
            body = ErrorBody,
            headers(("Retry-After" = i64, description = "Whole seconds until the next try"))),
    ))]
async fn login(
    State(state): State<AccountDeps>,
    client: Client,
    headers: HeaderMap,
    Json(body): Json<Login>,
) -> ApiResult<Response> {
    let mode = match body.mode.as_deref() {
        None | Some("live") => Mode::Live,
        Some("test") => Mode::Test,
        Some(_) => return Err(ApiError::invalid_field("mode", "must be live or test")),
    };
    let email = body.email.unwrap_or_default().trim().to_lowercase();
    let password = body.password.unwrap_or_default();
    let request = super::start::request_of(&headers, client.0);
    let account = sign_in::verify_password(&state, &email, password, client.0, &request).await?;
    sign_in::check_second_factor(&state, &account, body.totp.as_deref(), &request).await?;
    // A sign-in never reuses the session the browser came with (session
    // fixation): that one ends, a fresh one starts.
    if let Some(old) = session::cookie_secret(&headers) {
        end_presented_session(&state, old).await;
    }
    start_session(&state, &account.into(), mode, client.0, &headers).await
}

/// Sign out
///
/// Ends the session the request came with and clears its cookie.
#[utoipa::path(post, path = "/api/v1/auth/logout", operation_id = "sign_out",
    tag = "Agent sign-in",
    responses((status = 204, description = "Signed out",
        headers(("Set-Cookie" = String, description = "Clears `sd_session`")))))]
async fn logout(
    State(state): State<AccountDeps>,
    signed_in: SignedIn,
    requested: Requested,
) -> ApiResult<Response> {
    let (company, user) = (signed_in.company_id(), signed_in.user_id());
    let db = signed_in.principal.acting(&state.db, requested);
    let session = signed_in.session.session_id();
    super::end::one_session(&state, &db, company, user, session).await?;
    let mut response = StatusCode::NO_CONTENT.into_response();
    response.headers_mut().insert(
        header::SET_COOKIE,
        cleared_cookie(secure_cookies(&state.public_url)),
    );
    Ok(response)
}

/// Who is signed in
///
/// The agent, their role's scopes, their teams and the `csrfToken` every
/// change made with the cookie carries in `X-CSRF-Token`.
#[utoipa::path(get, path = "/api/v1/auth/me", operation_id = "get_signed_in_agent",
    tag = "Agent sign-in",
    responses((status = 200, description = "The signed-in agent", body = Me)))]
async fn me(State(state): State<AccountDeps>, signed_in: SignedIn) -> ApiResult<Response> {
    let mut response = Json(me_of(&state, &signed_in).await?).into_response();
    no_store(&mut response);
    Ok(response)
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = AgentSessionList)]
struct SessionList {
    data: Vec<SessionView>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = AgentSession)]
#[serde(rename_all = "camelCase")]
struct SessionView {
    #[serde(flatten)]
    session: SessionInfo,
    /// Whether this is the session the request came with.
    current: bool,
}

/// List one's open sessions
///
/// Every open session of the signed-in agent (device, address, last seen),
/// the one the request came with marked `current`.
#[utoipa::path(get, path = "/api/v1/auth/sessions", operation_id = "list_agent_sessions",
    tag = "Agent sign-in",
    responses((status = 200, description = "The open sessions", body = SessionList)))]
async fn list_sessions(
    State(db): State<Db>,
    State(clock): State<Clock>,
    State(access): State<Arc<Access>>,
    signed_in: SignedIn,
) -> ApiResult<Json<SessionList>> {
    let now = clock.now();
    let idle = access.session_idle;
    let sessions = store::list_open(&db, signed_in.user_id(), now, idle).await?;
    let current = signed_in.session.session_id();
    Ok(Json(SessionList {
        data: sessions
            .into_iter()
            .map(|session| SessionView {
                current: session.id == current,
                session,
            })
            .collect(),
    }))
}

/// End one of one's sessions
///
/// Its sockets close too; another agent's session is 404.
#[utoipa::path(delete, path = "/api/v1/auth/sessions/{id}", operation_id = "end_agent_session",
    tag = "Agent sign-in",
    params(("id" = uuid::Uuid, Path, description = "Session id")),
    responses(
        (status = 204, description = "Ended"),
        (status = 404, description = "No such open session of this agent", body = ErrorBody),
    ))]
async fn end_session(
    State(state): State<AccountDeps>,
    signed_in: SignedIn,
    requested: Requested,
    Id(id): Id,
) -> ApiResult<StatusCode> {
    let (company, user) = (signed_in.company_id(), signed_in.user_id());
    let db = signed_in.principal.acting(&state.db, requested);
    if super::end::one_session(&state, &db, company, user, id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found())
    }
}

/// End one's other sessions
///
/// Ends every session of the agent but the one the request came with.
#[utoipa::path(delete, path = "/api/v1/auth/sessions", operation_id = "end_other_agent_sessions",
    tag = "Agent sign-in",
    responses((status = 204, description = "Every other session ended")))]
async fn end_other_sessions(
    State(state): State<AccountDeps>,
    signed_in: SignedIn,
    requested: Requested,
) -> ApiResult<StatusCode> {
    let keep = signed_in.session.session_id();
    let (company, user) = (signed_in.company_id(), signed_in.user_id());
    let db = signed_in.principal.acting(&state.db, requested);
    super::end::all_sessions_of(&state, &db, company, user, Some(keep)).await?;
    Ok(StatusCode::NO_CONTENT)
}
