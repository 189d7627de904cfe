//! Opening a session: what every way of signing in (a password, an
//! accepted invitation, SSO) ends with — a new session, its cookie, and the
//! signed-in agent as `Me`.

use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use uuid::Uuid;

use super::AccountDeps;
use super::sessions::{self as store, NewSession};
use super::signed_in::{SignedIn, secure_cookies, session_cookie};
use crate::auth::{Mode, session};
use crate::error::ApiResult;
use crate::extract::Json;
use crate::users::User;

/// Who is signed in: the user, their scopes and teams, and the token every
/// change made with the cookie carries in `X-CSRF-Token`.
#[derive(Serialize, utoipa::ToSchema)]
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
    state: &AccountDeps,
    owner: &SessionOwner,
    mode: Mode,
    client: Option<std::net::IpAddr>,
    headers: &HeaderMap,
) -> ApiResult<Response> {
    let (signed_in, cookie) = open_session(state, owner, mode, client, headers).await?;
    let me = me_of(state, &signed_in).await?;
    let mut response = Json(me).into_response();
    response.headers_mut().insert(header::SET_COOKIE, cookie);
    no_store(&mut response);
    Ok(response)
}

/// Opens a session for `owner` in `mode`: the session as a request signed
/// in with it sees it, and the `Set-Cookie` value that hands it out.
pub async fn open_session(
    state: &AccountDeps,
    owner: &SessionOwner,
    mode: Mode,
    client: Option<std::net::IpAddr>,
    headers: &HeaderMap,
) -> ApiResult<(SignedIn, HeaderValue)> {
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
        expires_at: now.plus(state.session_max),
    };
    let db = state.db.with_request(request_of(headers, client));
    store::create(&db, new, now).await?;
    crate::users::credentials::record_sign_in(&state.db, owner.user_id, now).await?;
    let ready = session::ready_session(&state.access.sessions, &state.db, &secret).await?;
    let principal = ready.principal(now, state.access.session_idle)?;
    let signed_in = SignedIn {
        session: ready,
        principal,
    };
    let cookie = session_cookie(
        &secret,
        state.session_max,
        secure_cookies(&state.public_url),
    );
    Ok((signed_in, cookie))
}

/// Where a sign-in came from, for its audit entry: the request id the
/// request-id layer set, the client's address and its user agent.
pub fn request_of(
    headers: &HeaderMap,
    client: Option<std::net::IpAddr>,
) -> crate::actor::RequestContext {
    let header = |name| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
    };
    crate::actor::RequestContext {
        request_id: header("x-request-id"),
        ip: client.map(|ip| ip.to_string()),
        user_agent: header(header::USER_AGENT.as_str())
            .map(|agent| agent.chars().take(512).collect()),
    }
}

/// Ends the session whose secret the request presented, if it is one.
pub async fn end_presented_session(state: &AccountDeps, secret: &str) {
    let Ok(old) = session::ready_session(&state.access.sessions, &state.db, secret).await else {
        return;
    };
    let (company, user, session) = (old.company_id(), old.user_id(), old.session_id());
    super::end::one_session(state, &state.db, company, user, session)
        .await
        .ok();
}

pub async fn me_of(state: &AccountDeps, signed_in: &SignedIn) -> ApiResult<Me> {
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

/// Answers about credentials are never cached.
pub fn no_store(response: &mut Response) {
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
}
