//! The end of an SSO sign-in: the user the verified identity names (found
//! by company and email, or created when just-in-time provisioning is on),
//! then the answer that signs them in.

use std::net::IpAddr;

use axum::response::Response;

use super::model::{JitRole, SsoConfig, email_in_domain};
use super::oidc::Identity;
use crate::accounts::AccountDeps;
use crate::accounts::start::{SessionOwner, start_session};
use crate::auth::{Mode, Tenant};
use crate::error::{ApiError, ApiResult, StoreError};
use crate::users::store::{self as users, NewUser};
use crate::users::{Role, User};
use crate::validate::{NAME_MAX, is_plausible_email};

/// A 401 `sso_failed` saying why.
pub fn failed(reason: impl Into<String>) -> ApiError {
    ApiError::unauthorized(crate::error::ErrorCode::SsoFailed, reason)
}

/// The company's user the identity names, or a 401 `sso_failed` saying
/// why there is none.
pub async fn user_of(
    state: &AccountDeps,
    config: &SsoConfig,
    identity: Identity,
) -> ApiResult<User> {
    let email = identity
        .email
        .filter(|email| is_plausible_email(email))
        .ok_or_else(|| failed("the ID token carries no usable email"))?;
    if identity.email_verified == Some(false) {
        return Err(failed("the identity provider has not verified this email"));
    }
    if let Some(domain) = &config.allowed_email_domain
        && !email_in_domain(&email, domain)
    {
        return Err(failed(format!(
            "only emails at {domain} may sign in to this company"
        )));
    }
    if let Some(user) = users::find_by_email(&state.db, config.company_id, &email).await? {
        return Ok(user);
    }
    if !config.jit_enabled {
        return Err(failed(
            "no user of this company has this email (ask an admin to add you)",
        ));
    }
    let name = identity
        .name
        .map(|name| name.trim().chars().take(NAME_MAX).collect::<String>())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| email.split('@').next().unwrap_or_default().to_string());
    // Users belong to both modes; a sign-in is the company's real (live)
    // work, so `user.created` goes out in live mode.
    let tenant = Tenant::new(config.company_id, Mode::Live);
    let new = NewUser {
        id: None,
        name,
        email: email.clone(),
        role: role_of(config.jit_role).into(),
    };
    match users::create(&state.db, &tenant, new, state.clock.now()).await {
        Ok(user) => Ok(user),
        // Two first sign-ins at once: the other one created the user.
        Err(StoreError::Conflict(_)) => users::find_by_email(&state.db, config.company_id, &email)
            .await?
            .ok_or_else(ApiError::internal),
        Err(err) => Err(err.into()),
    }
}

/// Today's users hold AGENT or ADMIN.
fn role_of(role: JitRole) -> Role {
    match role {
        JitRole::Agent => Role::Agent,
        JitRole::Admin => Role::Admin,
    }
}

/// Signs `user` of `company_id` in: the one place a verified SSO identity
/// becomes a session, opened as a password sign-in opens one (the session
/// the browser came with ends). With a `redirect_after` the answer is a 303
/// there (a browser followed the provider's redirect here), otherwise 200
/// with the signed-in agent; both set the session cookie.
pub async fn complete_sign_in(
    state: &AccountDeps,
    company_id: uuid::Uuid,
    user: User,
    client: Option<IpAddr>,
    headers: &axum::http::HeaderMap,
    redirect_after: Option<String>,
) -> ApiResult<Response> {
    if !user.is_active {
        return Err(failed("this user is deactivated"));
    }
    tracing::info!(user = %user.id, client = ?client, "SSO sign-in");
    if let Some(old) = crate::auth::session::cookie_secret(headers) {
        crate::accounts::start::end_presented_session(state, old).await;
    }
    let owner = SessionOwner {
        company_id,
        user_id: user.id,
    };
    let mut response = start_session(state, &owner, Mode::Live, client, headers).await?;
    if let Some(target) = redirect_after
        && let Ok(location) = axum::http::HeaderValue::try_from(target)
    {
        *response.status_mut() = axum::http::StatusCode::SEE_OTHER;
        response
            .headers_mut()
            .insert(axum::http::header::LOCATION, location);
    }
    Ok(response)
}
