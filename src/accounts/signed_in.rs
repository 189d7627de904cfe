//! The signed-in agent of an `/api/v1/auth` route, and the cookie that
//! carries a session. These routes are mounted outside the API's key
//! authentication (signing in needs no credential), so the ones that need a
//! session check it here, as the API's middleware does for every other
//! route: the session, its standing, and the CSRF token on a change.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::HeaderValue;
use axum::http::request::Parts;
use uuid::Uuid;

use crate::auth::Principal;
use crate::auth::session::{self, COOKIE, ReadySession};
use crate::error::{ApiError, ErrorCode};
use crate::state::AppState;

/// An agent signed in by the session cookie of the request.
pub struct SignedIn {
    pub session: Arc<ReadySession>,
    pub principal: Principal,
}

impl SignedIn {
    pub fn user_id(&self) -> Uuid {
        self.session.user_id()
    }

    pub fn company_id(&self) -> Uuid {
        self.principal.tenant.company_id
    }
}

impl FromRequestParts<AppState> for SignedIn {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let Some(secret) = session::cookie_secret(&parts.headers) else {
            return Err(ApiError::unauthorized(
                ErrorCode::SignInRequired,
                "Sign in first: this route needs an agent's session cookie",
            ));
        };
        let access = &state.access;
        let ready = session::ready_session(&access.sessions, &state.db, secret).await?;
        let principal = ready.principal(access.clock().now(), access.session_idle)?;
        if session::changes_state(&parts.method) && !ready.csrf_matches(&parts.headers) {
            return Err(session::csrf_failed());
        }
        Ok(SignedIn {
            session: ready,
            principal,
        })
    }
}

/// Whether cookies must be `Secure`: whenever the service is reached over
/// https (its public URL says so).
pub fn secure_cookies(public_url: &str) -> bool {
    public_url.starts_with("https://")
}

/// The `Set-Cookie` value that gives the browser session secret `secret`
/// for `max_age` (the session's absolute lifetime; it ends earlier if idle).
pub fn session_cookie(secret: &str, max_age: std::time::Duration, secure: bool) -> HeaderValue {
    let secure = if secure { "; Secure" } else { "" };
    let value = format!(
        "{COOKIE}={secret}; Path=/; HttpOnly; SameSite=Lax; Max-Age={}{secure}",
        max_age.as_secs()
    );
    // The secret is base62 and the rest is ours: always a valid value.
    HeaderValue::try_from(value).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The `Set-Cookie` value that makes the browser forget the session.
pub fn cleared_cookie(secure: bool) -> HeaderValue {
    if secure {
        HeaderValue::from_static("sd_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure")
    } else {
        HeaderValue::from_static("sd_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0")
    }
}

/// The client's address as the server resolved it (behind trusted proxies,
/// the forwarded one).
pub struct Client(pub Option<std::net::IpAddr>);

impl<S: Send + Sync> FromRequestParts<S> for Client {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(Client(crate::client_address::ClientAddress::of(
            &parts.extensions,
        )))
    }
}
