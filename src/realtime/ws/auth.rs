//! The socket handshake's credentials: an API key (`X-API-Key`, needs
//! `chat:read`), a visitor token (one session) or a socket token (an agent
//! console's short-lived pass from `POST /api/v1/ws/tokens`).

use std::net::IpAddr;

use axum::http::{HeaderMap, StatusCode};
use serde::Deserialize;
use uuid::Uuid;

use crate::auth::middleware::{API_KEY_HEADER, principal_for};
use crate::auth::{Scope, Tenant};
use crate::chat::store;
use crate::companies::CompanyStatus;
use crate::error::{ApiError, StoreError};
use crate::realtime::token::TokenGrant;
use crate::state::AppState;

/// Who is on the socket.
#[derive(Debug, Clone)]
pub enum Credential {
    /// An API key or socket token with `chat:read` (`can_write`: `chat:write`).
    /// `key_id` and `rate_limit` are the key's (the minting key's for a
    /// socket token): its `message` frames spend that key's allowance.
    Agent {
        tenant: Tenant,
        can_write: bool,
        key_id: Uuid,
        rate_limit: i64,
    },
    /// A visitor token: one session.
    Visitor {
        tenant: Tenant,
        session_id: Uuid,
        entity_id: Uuid,
    },
}

impl Credential {
    pub fn tenant(&self) -> Tenant {
        match self {
            Credential::Agent { tenant, .. } | Credential::Visitor { tenant, .. } => *tenant,
        }
    }

    pub fn is_visitor(&self) -> bool {
        matches!(self, Credential::Visitor { .. })
    }
}

#[derive(Deserialize)]
pub struct WsQuery {
    pub token: Option<String>,
}

fn unauthorized(code: &'static str, message: &str) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, code, message)
}

/// Resolves the handshake's credentials: a key header wins over a token.
/// `client` is the peer, for the failed-authentication limit (see
/// `principal_for`); tokens are checked by their signature, with no lookup.
pub async fn authenticate(
    state: &AppState,
    headers: &HeaderMap,
    token: Option<&str>,
    client: Option<IpAddr>,
) -> Result<Credential, ApiError> {
    let token = token.map(str::trim).filter(|t| !t.is_empty());
    let Some(token) = token.filter(|_| !headers.contains_key(API_KEY_HEADER)) else {
        let principal = principal_for(state, headers.get(API_KEY_HEADER), client).await?;
        // Same order as every /api/v1 request: the key's allowance is spent
        // before the scope is checked.
        let decision = state.access.check_rate(&principal).await;
        if !decision.allowed {
            return Err(crate::ratelimit::exceeded(decision.retry_after_secs));
        }
        if !principal.scopes.contains(Scope::ChatRead) {
            return Err(ApiError::forbidden_scope(Scope::ChatRead.as_str()));
        }
        return Ok(Credential::Agent {
            tenant: principal.tenant,
            can_write: principal.scopes.contains(Scope::ChatWrite),
            key_id: principal.key_id,
            rate_limit: principal.rate_limit,
        });
    };
    let key = state.realtime.token_key(&state.db).await?;
    let credential = match key.verify(token) {
        Some(TokenGrant::Visitor { tenant, session_id }) => {
            let session = match store::find_session(&state.db, &tenant, session_id).await {
                Ok(session) => session,
                Err(StoreError::NotFound) => {
                    return Err(unauthorized("invalid_token", "Invalid token"));
                }
                Err(other) => return Err(other.into()),
            };
            Credential::Visitor {
                tenant,
                session_id,
                entity_id: session.entity_id,
            }
        }
        Some(TokenGrant::Socket {
            tenant,
            key_id,
            scopes,
            expires_at,
        }) => {
            if expires_at <= chrono::Utc::now().timestamp() {
                return Err(unauthorized("invalid_token", "Token has expired"));
            }
            // The minting key's limit, for its `message` frames.
            let minted_by = match crate::keys::store::find(&state.db, &tenant, key_id).await {
                Ok(key) => key,
                Err(StoreError::NotFound) => {
                    return Err(unauthorized("invalid_api_key", "Invalid API key"));
                }
                Err(other) => return Err(other.into()),
            };
            Credential::Agent {
                tenant,
                can_write: scopes.contains(Scope::ChatWrite),
                key_id,
                rate_limit: minted_by.rate_limit,
            }
        }
        None => return Err(unauthorized("invalid_token", "Invalid token")),
    };
    let company = crate::companies::store::find(&state.db, credential.tenant().company_id).await?;
    if company.status != CompanyStatus::Active {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "account_suspended",
            "Account is suspended",
        ));
    }
    Ok(credential)
}

/// The cap on sockets open at once with the handshake's token, and the key
/// it is counted under: a visitor token per session (it names one), a socket
/// token per token. Key-header sockets have none (the key's rate limit
/// bounds its handshakes).
pub fn slot_for(
    credential: &Credential,
    headers: &HeaderMap,
    token: Option<&str>,
) -> Option<(String, usize)> {
    use crate::realtime::slots::{PER_SOCKET_TOKEN, PER_VISITOR_TOKEN};
    let token = token
        .map(str::trim)
        .filter(|t| !t.is_empty() && !headers.contains_key(API_KEY_HEADER))?;
    match credential {
        Credential::Visitor { session_id, .. } => {
            Some((format!("visitor:{session_id}"), PER_VISITOR_TOKEN))
        }
        Credential::Agent { .. } => Some((
            format!("socket:{}", crate::auth::key::hash(token)),
            PER_SOCKET_TOKEN,
        )),
    }
}
