//! The end of an SSO sign-in: the user the verified identity names (found
//! by company and email, or created when just-in-time provisioning is on),
//! then the answer that signs them in.

use std::net::IpAddr;

use axum::Json;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::flow::failed;
use super::model::{JitRole, SsoConfig, email_in_domain};
use super::oidc::Identity;
use crate::auth::{Mode, Tenant};
use crate::error::{ApiError, ApiResult, StoreError};
use crate::state::AppState;
use crate::users::store::{self as users, NewUser};
use crate::users::{Role, User};
use crate::validate::{NAME_MAX, is_plausible_email};

/// Who is signing in from where, for the session.
#[derive(Debug, Clone)]
pub struct ClientMeta {
    pub address: Option<IpAddr>,
    pub user_agent: Option<String>,
}

/// The company's user the identity names, or a 401 `sso_failed` saying
/// why there is none.
pub async fn user_of(state: &AppState, config: &SsoConfig, identity: Identity) -> ApiResult<User> {
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
    let tenant = Tenant {
        company_id: config.company_id,
        mode: Mode::Live,
    };
    let new = NewUser {
        id: None,
        name,
        email: email.clone(),
        role: role_of(config.jit_role),
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

/// Signs `user` in. The one place a verified SSO identity becomes a
/// session; until agent sessions exist it answers 200 with the user (and
/// where the agent asked to land).
pub async fn complete_sign_in(
    _state: &AppState,
    user: User,
    meta: ClientMeta,
    redirect_after: Option<String>,
) -> Response {
    tracing::info!(
        user = %user.id,
        client = ?meta.address,
        user_agent = meta.user_agent.as_deref().unwrap_or(""),
        "SSO sign-in"
    );
    Json(json!({ "user": user, "redirectAfter": redirect_after })).into_response()
}
