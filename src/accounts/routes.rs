//! `/api/v1/auth`: an agent signs in with email and password, and sees and
//! ends their sessions. Mounted beside the API rather than behind its key
//! authentication: signing in needs no credential, and the routes that need
//! a session take it from the cookie (`SignedIn`).

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use serde::{Deserialize, Serialize};

use super::sessions::{self as store, SessionInfo};
use super::sign_in;
use super::signed_in::{Client, SignedIn, cleared_cookie, secure_cookies};
use super::start::{end_presented_session, me_of, no_store, start_session};
use crate::auth::{Mode, session};
use crate::error::{ApiError, ApiResult};
use crate::extract::{Id, Json, Requested};
use crate::state::AppState;

/// The `/api/v1/auth` routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/v1/auth/login", post(login))
        .route("/api/v1/auth/logout", post(logout))
        .route("/api/v1/auth/me", get(me))
        .route(
            "/api/v1/auth/sessions",
            get(list_sessions).delete(end_other_sessions),
        )
        .route("/api/v1/auth/sessions/{id}", delete(end_session))
        .merge(super::links::router())
        .merge(super::keys::router())
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Login {
    email: Option<String>,
    password: Option<String>,
    /// The second factor's current code, when the account has one.
    totp: Option<String>,
    /// `live` (the default) or `test`: which mode's data the session sees.
    mode: Option<String>,
}

async fn login(
    State(state): State<AppState>,
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

async fn logout(
    State(state): State<AppState>,
    signed_in: SignedIn,
    requested: Requested,
) -> ApiResult<Response> {
    let (company, user) = (signed_in.company_id(), signed_in.user_id());
    let db = signed_in.principal.acting(&state.db, requested);
    let session = signed_in.session.session_id();
    super::end::one_session(&state, &db, company, user, session).await?;
    let mut response = StatusCode::NO_CONTENT.into_response();
    response
        .headers_mut()
        .insert(header::SET_COOKIE, cleared_cookie(secure_cookies(&state)));
    Ok(response)
}

async fn me(State(state): State<AppState>, signed_in: SignedIn) -> ApiResult<Response> {
    let mut response = Json(me_of(&state, &signed_in).await?).into_response();
    no_store(&mut response);
    Ok(response)
}

#[derive(Serialize)]
struct SessionList {
    data: Vec<SessionView>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SessionView {
    #[serde(flatten)]
    session: SessionInfo,
    /// Whether this is the session the request came with.
    current: bool,
}

async fn list_sessions(
    State(state): State<AppState>,
    signed_in: SignedIn,
) -> ApiResult<Json<SessionList>> {
    let now = state.clock.now();
    let idle = state.access.session_idle;
    let sessions = store::list_open(&state.db, signed_in.user_id(), now, idle).await?;
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

async fn end_session(
    State(state): State<AppState>,
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

/// Ends every session of the agent but the one the request came with.
async fn end_other_sessions(
    State(state): State<AppState>,
    signed_in: SignedIn,
    requested: Requested,
) -> ApiResult<StatusCode> {
    let keep = signed_in.session.session_id();
    let (company, user) = (signed_in.company_id(), signed_in.user_id());
    let db = signed_in.principal.acting(&state.db, requested);
    super::end::all_sessions_of(&state, &db, company, user, Some(keep)).await?;
    Ok(StatusCode::NO_CONTENT)
}
