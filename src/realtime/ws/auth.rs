//! The socket handshake's credentials: an API key (`X-API-Key`, needs
//! `chat:read`), a visitor token (one session), a socket token (an agent
//! console's short-lived pass from `POST /api/v1/ws/tokens`) or an agent's
//! session cookie (from a page of the service's own origin only: a cookie
//! goes with every request to the host, a cross-site page's included). A socket
//! token is only as good as the key (or the agent's session) that minted
//! it: the handshake checks that key or session as it stands now and spends
//! its allowance, as a key header or the cookie does.

use std::net::IpAddr;

use axum::extract::FromRef;
use axum::http::HeaderMap;
use serde::Deserialize;
use uuid::Uuid;

use crate::actor::Actor;
use crate::auth::by_id::principal_by_id;
use crate::auth::middleware::{API_KEY_HEADER, principal_for};
use crate::auth::session::principal_by_session_id;
use crate::auth::{Principal, Scope, ScopeSet, Tenant};
use crate::error::{ApiError, ErrorCode};
use crate::realtime::hub::{Holder, TicketReads};
use crate::realtime::token::{Minter, TokenGrant};
use crate::state::AppState;
use crate::time::Timestamp;

/// Who is on the socket.
#[derive(Debug, Clone)]
pub enum Credential {
    /// An API key or socket token with `chat:read` (`can_write`: whether
    /// the key held `chat:write` at the handshake; the hub keeps it live).
    /// `key_id` and `rate_limit` are the key's (the minting key's for a
    /// socket token): its `message` frames spend that key's allowance.
    Agent {
        tenant: Tenant,
        key_id: Uuid,
        can_write: bool,
        expires_at: Option<Timestamp>,
        rate_limit: i64,
        /// The key's scopes at the handshake (ticket channels need
        /// `tickets:read`; internal notes need `tickets:write`); the hub
        /// keeps what they read of tickets live (`Connection::ticket_reads`).
        scopes: ScopeSet,
        /// The agent's role reads internal notes without `tickets:write`,
        /// at the handshake (a change of role ends the session; a change of
        /// its custom role's scopes reaches the hub as a notice).
        notes: bool,
        /// The agent's session, when the socket was opened with its cookie
        /// (then `key_id` is the user's id, their allowance's bucket).
        session: Option<Uuid>,
        /// Who the socket's changes are made by: the key.
        actor: Actor,
    },
    /// A visitor token: one session.
    Visitor {
        tenant: Tenant,
        session_id: Uuid,
        entity_id: Uuid,
        /// What the handshake's token said: each `message` frame checks
        /// that its session's nonce and identity secret still match.
        claims: crate::realtime::token::VisitorClaims,
        /// Who the socket's changes are made by: the session's visitor, as
        /// named at the handshake.
        actor: Actor,
    },
}

impl Credential {
    /// Who the changes this socket makes are made by.
    pub fn actor(&self) -> &Actor {
        match self {
            Credential::Agent { actor, .. } | Credential::Visitor { actor, .. } => actor,
        }
    }

    pub fn tenant(&self) -> Tenant {
        match self {
            Credential::Agent { tenant, .. } | Credential::Visitor { tenant, .. } => *tenant,
        }
    }

    pub fn is_visitor(&self) -> bool {
        matches!(self, Credential::Visitor { .. })
    }

    /// Whose credentials these are, for the hub.
    pub fn holder(&self) -> Holder {
        match self {
            Credential::Agent {
                tenant,
                key_id,
                session: Some(session_id),
                ..
            } => Holder::Agent {
                company_id: tenant.company_id,
                user_id: *key_id,
                session_id: *session_id,
            },
            Credential::Agent { tenant, key_id, .. } => Holder::Key {
                company_id: tenant.company_id,
                key_id: *key_id,
            },
            Credential::Visitor {
                tenant,
                session_id,
                entity_id,
                claims,
                ..
            } => Holder::Visitor {
                company_id: tenant.company_id,
                entity_id: *entity_id,
                session_id: *session_id,
                nonce: claims.nonce,
                secret: claims.secret,
            },
        }
    }

    /// What the socket reads of the ticket channels at the handshake.
    pub fn ticket_reads(&self) -> TicketReads {
        match self {
            Credential::Agent { scopes, notes, .. } => TicketReads::of(scopes, *notes),
            Credential::Visitor { .. } => TicketReads::Nothing,
        }
    }

    /// Whether the socket may send messages and typing at the handshake.
    pub fn can_write(&self) -> bool {
        match self {
            Credential::Agent { can_write, .. } => *can_write,
            Credential::Visitor { .. } => true,
        }
    }
}

#[derive(Deserialize)]
pub struct WsQuery {
    pub token: Option<String>,
}

/// Resolves the handshake's credentials: a key header wins over a token.
/// `client` is the client's address, for the failed-authentication limit (see
/// `principal_for`); tokens are checked by their signature, with no lookup.
pub async fn authenticate(
    state: &AppState,
    headers: &HeaderMap,
    token: Option<&str>,
    client: Option<IpAddr>,
) -> Result<Credential, ApiError> {
    let token = token.map(str::trim).filter(|t| !t.is_empty());
    if token.is_none()
        && !headers.contains_key(API_KEY_HEADER)
        && let Some(secret) = crate::auth::session::cookie_secret(headers)
    {
        return signed_in_agent(state, headers, secret).await;
    }
    let Some(token) = token.filter(|_| !headers.contains_key(API_KEY_HEADER)) else {
        let principal = principal_for(
            &state.access,
            &state.db,
            headers.get(API_KEY_HEADER),
            client,
        )
        .await?;
        return agent(state, principal).await;
    };
    if token.starts_with("vt_") {
        // Expiry, revocation, secret rotation and the company's standing.
        let visitor = crate::widget::access::check(
            &crate::widget::access::VisitorTokens::from_ref(state),
            token,
            crate::widget::access::Use::Read,
        )
        .await?;
        return Ok(Credential::Visitor {
            tenant: visitor.tenant(),
            session_id: visitor.session_id(),
            entity_id: visitor.entity_id,
            actor: visitor.actor(),
            claims: visitor.claims,
        });
    }
    let key = state.realtime.token_key(&state.db).await?;
    let Some(TokenGrant::Socket {
        tenant,
        minter,
        expires_at,
        ..
    }) = key.verify(token)
    else {
        return Err(ApiError::unauthorized(
            ErrorCode::InvalidToken,
            "Invalid token",
        ));
    };
    if expires_at <= state.clock.now().0.timestamp() {
        return Err(ApiError::unauthorized(
            ErrorCode::InvalidToken,
            "Token has expired",
        ));
    }
    let principal = match minter {
        Minter::Key(key_id) => principal_by_id(&state.access, &state.db, key_id).await?,
        Minter::Session(session_id) => {
            principal_by_session_id(&state.access, &state.db, session_id).await?
        }
    };
    // Company and mode: a session's tenant also carries its role's
    // visibility, which the token does not.
    if (principal.tenant.company_id, principal.tenant.mode) != (tenant.company_id, tenant.mode) {
        return Err(ApiError::unauthorized(
            ErrorCode::InvalidToken,
            "Invalid token",
        ));
    }
    // The key's (or session's) scopes now, not those it had when it minted the token.
    agent(state, principal).await
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

/// An agent socket of `principal`'s key, in the order of every /api/v1
/// request: the key's allowance is spent before the scope is checked.
async fn agent(state: &AppState, principal: Principal) -> Result<Credential, ApiError> {
    let decision = state.access.check_rate(&principal).await;
    if !decision.allowed {
        crate::metrics::rate_limited(crate::metrics::Limiter::ApiKey);
        return Err(crate::ratelimit::exceeded(decision.retry_after_secs));
    }
    if !principal.scopes.contains(Scope::ChatRead) {
        return Err(ApiError::forbidden_scope(Scope::ChatRead.as_str()));
    }
    Ok(Credential::Agent {
        actor: principal.actor(),
        tenant: principal.tenant,
        key_id: principal.key_id,
        can_write: principal.scopes.contains(Scope::ChatWrite),
        expires_at: principal.expires_at,
        rate_limit: principal.rate_limit,
        scopes: principal.scopes,
        notes: principal.reads_internal_notes(),
        session: principal.agent.as_ref().map(|agent| agent.session_id),
    })
}

/// An agent socket opened with the session cookie whose secret is `secret`:
/// only from a page of the service's own origin (its public URL), since a
/// browser sends the cookie with a cross-site page's handshake too.
async fn signed_in_agent(
    state: &AppState,
    headers: &HeaderMap,
    secret: &str,
) -> Result<Credential, ApiError> {
    let origin = headers
        .get(axum::http::header::ORIGIN)
        .and_then(|value| value.to_str().ok());
    if origin != Some(state.public_url.as_ref()) {
        return Err(ApiError::new(
            axum::http::StatusCode::FORBIDDEN,
            ErrorCode::CsrfFailed,
            "A socket opened with the session cookie must come from the service's own origin",
        ));
    }
    let access = &state.access;
    let ready = crate::auth::session::ready_session(&access.sessions, &state.db, secret).await?;
    let principal = ready.principal(access.clock().now(), access.session_idle)?;
    agent(state, principal).await
}
