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
use uuid::Uuid;

use super::sessions::{self as store, NewSession, SessionInfo};
use super::signed_in::{Client, SignedIn, cleared_cookie, secure_cookies, session_cookie};
use super::{password, sign_in};
use crate::auth::{Mode, session};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::extract::{Id, Json};
use crate::state::AppState;
use crate::users::User;

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

/// Who is signed in: the user, their scopes and teams, and the token every
/// change made with the cookie carries in `X-CSRF-Token`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Me {
    pub user: User,
    pub session_id: Uuid,
    #[serde(rename = "type")]
    pub mode: Mode,
    pub scopes: crate::auth::ScopeSet,
    pub teams: Vec<Uuid>,
    pub csrf_token: String,
    /// The company asks every agent for a second factor and this one has
    /// none yet: until they set it up (`/auth/totp`), they hold no scope.
    pub two_factor_setup_required: bool,
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
    let account = sign_in::verify_password(&state, &email, password, client.0).await?;
    sign_in::check_second_factor(&state, &account, body.totp.as_deref()).await?;
    // A sign-in never reuses the session the browser came with (session
    // fixation): that one ends, a fresh one starts.
    if let Some(old) = session::cookie_secret(&headers) {
        end_presented_session(&state, old).await;
    }
    start_session(&state, &account.into(), mode, client.0, &headers).await
}

/// Who a new session is for.
pub struct SessionOwner {
    pub company_id: Uuid,
    pub user_id: Uuid,
}

impl From<crate::users::credentials::SignInAccount> for SessionOwner {
    fn from(account: crate::users::credentials::SignInAccount) -> Self {
        SessionOwner {
            company_id: account.company_id,
            user_id: account.id,
        }
    }
}

/// Opens a session for `owner` in `mode` and answers as sign-in does: 200
/// with `Me` and the cookie. Every way of signing in (password, SSO) ends
/// here.
pub async fn start_session(
    state: &AppState,
    owner: &SessionOwner,
    mode: Mode,
    client: Option<std::net::IpAddr>,
    headers: &HeaderMap,
) -> ApiResult<Response> {
    let now = state.clock.now();
    let secret = crate::auth::key::random_base62(43);
    let csrf_token = crate::auth::key::random_base62(32);
    let user_agent = headers
        .get(header::USER_AGENT)
        .and_then(|value| value.to_str().ok())
        .map(|value| value.chars().take(256).collect::<String>());
    let ip = client.map(|ip| ip.to_string());
    let new = NewSession {
        company_id: owner.company_id,
        user_id: owner.user_id,
        mode,
        token_digest: &crate::auth::key::hash(&secret),
        csrf_token: &csrf_token,
        ip: ip.as_deref(),
        user_agent: user_agent.as_deref(),
        expires_at: now.plus(state.config.session_max),
    };
    store::create(&state.db, new, now).await?;
    crate::users::credentials::record_sign_in(&state.db, owner.user_id, now).await?;
    let ready = session::ready_session(&state.access.sessions, &state.db, &secret).await?;
    let principal = ready.principal(now, state.access.session_idle)?;
    let signed_in = SignedIn {
        session: ready,
        principal,
    };
    let me = me_of(state, &signed_in).await?;
    let cookie = session_cookie(&secret, state.config.session_max, secure_cookies(state));
    let mut response = Json(me).into_response();
    response.headers_mut().insert(header::SET_COOKIE, cookie);
    no_store(&mut response);
    Ok(response)
}

/// Ends the session whose secret the request presented, if it is one.
pub async fn end_presented_session(state: &AppState, secret: &str) {
    let Ok(old) = session::ready_session(&state.access.sessions, &state.db, secret).await else {
        return;
    };
    let (company, user, session) = (old.company_id(), old.user_id(), old.session_id());
    super::end::one_session(state, company, user, session)
        .await
        .ok();
}

async fn logout(State(state): State<AppState>, signed_in: SignedIn) -> ApiResult<Response> {
    let (company, user) = (signed_in.company_id(), signed_in.user_id());
    super::end::one_session(&state, company, user, signed_in.session.session_id()).await?;
    let mut response = StatusCode::NO_CONTENT.into_response();
    response
        .headers_mut()
        .insert(header::SET_COOKIE, cleared_cookie(secure_cookies(&state)));
    Ok(response)
}

async fn me_of(state: &AppState, signed_in: &SignedIn) -> ApiResult<Me> {
    let tenant = signed_in.principal.tenant;
    let user = crate::users::store::find(&state.db, tenant.company_id, signed_in.user_id()).await?;
    let teams =
        crate::teams::store::teams_of_member(&state.db, &tenant, signed_in.user_id()).await?;
    Ok(Me {
        user,
        session_id: signed_in.session.session_id(),
        mode: tenant.mode,
        scopes: signed_in.principal.scopes,
        teams,
        csrf_token: signed_in.session.csrf_token().to_owned(),
        two_factor_setup_required: signed_in.session.two_factor_setup_required(),
    })
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
    Id(id): Id,
) -> ApiResult<StatusCode> {
    let (company, user) = (signed_in.company_id(), signed_in.user_id());
    if super::end::one_session(&state, company, user, id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found())
    }
}

/// Ends every session of the agent but the one the request came with.
async fn end_other_sessions(
    State(state): State<AppState>,
    signed_in: SignedIn,
) -> ApiResult<StatusCode> {
    let keep = signed_in.session.session_id();
    let (company, user) = (signed_in.company_id(), signed_in.user_id());
    super::end::all_sessions_of(&state, company, user, Some(keep)).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Answers about credentials are never cached.
fn no_store(response: &mut Response) {
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
}

/// A password that does not meet the rules, as the field error of `field`.
pub fn refused_password(field: &str, reason: &str) -> ApiError {
    ApiError::invalid_field(field, reason)
}

/// The 401 of a sign-in that failed, whatever the reason (an unknown
/// email, a wrong password): the two are not told apart.
pub fn invalid_credentials() -> ApiError {
    ApiError::unauthorized(
        ErrorCode::InvalidCredentials,
        "The email or the password is wrong",
    )
}

/// `password::NewPassword::parse` as the API's field error.
pub fn new_password(field: &str, raw: Option<&str>) -> ApiResult<password::NewPassword> {
    password::NewPassword::parse(raw.unwrap_or(""))
        .map_err(|reason| refused_password(field, reason))
}
