//! What a visitor token opens, checked on every use: its signature, its
//! expiry (the node's clock), its session's nonce (revocation), the
//! identity secret that verified the visitor (a rotation without grace ends
//! it), its company's standing, and, for writes, how long ago its chat
//! closed. Also mints visitor tokens and the link tokens of reply emails.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::FromRef;
use axum::http::{HeaderMap, StatusCode, header};
use serde::Serialize;
use uuid::Uuid;

use super::store::{self, TokenState};
use crate::actor::Actor;
use crate::auth::Tenant;
use crate::chat::model::SessionStatus;
use crate::companies::CompanyStatus;
use crate::db::Db;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::realtime::Realtime;
use crate::realtime::token::{self, LinkClaims, SecretFingerprint, TokenGrant, VisitorClaims};
use crate::state::AppState;
use crate::time::{Clock, Timestamp};

/// How long the link in an agent-reply email may be traded for a visitor
/// token: a reply read a week later still continues the chat.
pub const LINK_LIFETIME: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// What checking and minting visitor tokens reads: the store, the clock,
/// the signing key (kept by realtime) and the two configured lifetimes.
#[derive(Clone)]
pub struct VisitorTokens {
    pub db: Db,
    pub clock: Clock,
    pub realtime: Arc<Realtime>,
    /// `SUPPORTDESK_VISITOR_TOKEN_TTL_MINUTES`.
    pub token_ttl: Duration,
    /// `SUPPORTDESK_VISITOR_CLOSED_WRITE_MINUTES`.
    pub closed_write: Duration,
}

impl FromRef<AppState> for VisitorTokens {
    fn from_ref(state: &AppState) -> VisitorTokens {
        VisitorTokens {
            db: state.db.clone(),
            clock: state.clock.clone(),
            realtime: state.realtime.clone(),
            token_ttl: state.config.visitor_token_ttl,
            closed_write: state.config.visitor_closed_write,
        }
    }
}

/// What the caller means to do with the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// Read the session, refresh the token, open a socket.
    Read,
    /// Post to the session (rate it, upload): refused once its chat has
    /// been closed for longer than `SUPPORTDESK_VISITOR_CLOSED_WRITE_MINUTES`.
    Write,
}

/// A visitor token that passed every check.
#[derive(Debug, Clone)]
pub struct VisitorAccess {
    pub claims: VisitorClaims,
    pub entity_id: Uuid,
    /// The session's visitor's name as the check read it.
    pub visitor_name: String,
}

impl VisitorAccess {
    /// Who this visitor's changes are made by.
    pub fn actor(&self) -> Actor {
        Actor::visitor(self.claims.session_id, &self.visitor_name)
    }

    pub fn tenant(&self) -> Tenant {
        self.claims.tenant
    }

    pub fn session_id(&self) -> Uuid {
        self.claims.session_id
    }
}

/// A freshly minted visitor token and when it stops working.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IssuedToken {
    /// `vt_…`.
    pub visitor_token: String,
    pub visitor_token_expires_at: Timestamp,
}

pub fn invalid_token(message: &str) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, ErrorCode::InvalidToken, message)
}

/// The bearer token of `Authorization: Bearer …`, or 401.
pub fn bearer(headers: &HeaderMap) -> ApiResult<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| invalid_token("Authorization: Bearer <visitorToken> is required"))
}

/// `check` for the bearer token of `headers`.
pub async fn from_headers(
    tokens: &VisitorTokens,
    headers: &HeaderMap,
    used_for: Use,
) -> ApiResult<VisitorAccess> {
    check(tokens, bearer(headers)?, used_for).await
}

/// The session a visitor token opens for `used_for`, or why not: 401
/// `invalid_token` (forged, expired, revoked, its secret rotated away, or a
/// write too long after the close), 403 `account_suspended`.
pub async fn check(tokens: &VisitorTokens, token: &str, used_for: Use) -> ApiResult<VisitorAccess> {
    let key = tokens.realtime.token_key(&tokens.db).await?;
    let Some(TokenGrant::Visitor(claims)) = key.verify(token) else {
        return Err(invalid_token("Invalid token"));
    };
    let now = tokens.clock.now();
    if claims.expires_at <= now.0.timestamp() {
        return Err(invalid_token("Visitor token has expired"));
    }
    let session = still_valid(tokens, &claims, used_for).await?;
    Ok(VisitorAccess {
        claims,
        entity_id: session.entity_id,
        visitor_name: session.visitor_name,
    })
}

/// Every check of `check` but the expiry, for a socket opened with a token
/// then valid (a socket outlives its token): the session's state.
pub async fn still_valid(
    tokens: &VisitorTokens,
    claims: &VisitorClaims,
    used_for: Use,
) -> ApiResult<TokenState> {
    let now = tokens.clock.now();
    let session = live_state(tokens, claims, now).await?;
    if used_for == Use::Write && closed_too_long(tokens, &session, now) {
        return Err(invalid_token(
            "This chat is closed: its visitor token no longer writes to it",
        ));
    }
    Ok(session)
}

/// The session's state when `claims` (a visitor's or a link's) still
/// match it: same nonce, a secret that may still vouch, an active company.
async fn live_state(
    tokens: &VisitorTokens,
    claims: &VisitorClaims,
    now: Timestamp,
) -> ApiResult<TokenState> {
    let session = store::token_state(&tokens.db, &claims.tenant, claims.session_id)
        .await?
        .ok_or_else(|| invalid_token("Invalid token"))?;
    if session.token_nonce != claims.nonce {
        return Err(invalid_token("Visitor token was revoked"));
    }
    if let Some(print) = claims.secret
        && !session
            .live_secrets(now)
            .any(|secret| token::fingerprint(secret) == print)
    {
        return Err(invalid_token(
            "Visitor token was issued under a widget identity secret that has been rotated",
        ));
    }
    if session.company_status != CompanyStatus::Active {
        return Err(ApiError::account_suspended());
    }
    Ok(session)
}

fn closed_too_long(tokens: &VisitorTokens, session: &TokenState, now: Timestamp) -> bool {
    session.status == SessionStatus::Closed
        && session
            .closed_at
            .is_none_or(|closed| closed.plus(tokens.closed_write) <= now)
}

/// A visitor token of session `session_id` with nonce `nonce`, vouched for
/// by the identity secret `secret` (None: an anonymous visitor), living
/// `SUPPORTDESK_VISITOR_TOKEN_TTL_MINUTES` from now.
pub async fn issue(
    tokens: &VisitorTokens,
    tenant: &Tenant,
    session_id: Uuid,
    nonce: i64,
    secret: Option<SecretFingerprint>,
) -> ApiResult<IssuedToken> {
    let expires = tokens.clock.now().plus(tokens.token_ttl);
    let claims = VisitorClaims {
        tenant: *tenant,
        session_id,
        expires_at: expires.0.timestamp(),
        nonce,
        secret,
    };
    Ok(IssuedToken {
        visitor_token: tokens.realtime.visitor_token(&tokens.db, &claims).await?,
        visitor_token_expires_at: at_second(expires),
    })
}

/// A fresh token for a valid one: same session, nonce and secret.
pub async fn refresh(tokens: &VisitorTokens, token: &str) -> ApiResult<(Uuid, IssuedToken)> {
    let claims = check(tokens, token, Use::Read).await?.claims;
    let issued = issue(
        tokens,
        &claims.tenant,
        claims.session_id,
        claims.nonce,
        claims.secret,
    )
    .await?;
    Ok((claims.session_id, issued))
}

/// The link token of an agent-reply email for session `session_id`: bound
/// to the session's nonce and link epoch as they are now, and for a
/// verified visitor to the entity's current identity secret.
pub async fn link_token(
    tokens: &VisitorTokens,
    tenant: &Tenant,
    session_id: Uuid,
) -> ApiResult<String> {
    let session = store::token_state(&tokens.db, tenant, session_id)
        .await?
        .ok_or_else(ApiError::not_found)?;
    let secret = session
        .current_secret()
        .filter(|_| session.visitor_verified)
        .map(token::fingerprint);
    let claims = LinkClaims {
        visitor: VisitorClaims {
            tenant: *tenant,
            session_id,
            expires_at: tokens.clock.now().plus(LINK_LIFETIME).0.timestamp(),
            nonce: session.token_nonce,
            secret,
        },
        epoch: session.link_epoch,
    };
    Ok(tokens
        .realtime
        .token_key(&tokens.db)
        .await?
        .link_token(&claims))
}

/// Trades a link token for a visitor token, once: the trade moves the
/// session's link epoch on, which retires this link and every link mailed
/// before it.
pub async fn exchange(tokens: &VisitorTokens, link: &str) -> ApiResult<(Uuid, IssuedToken)> {
    let key = tokens.realtime.token_key(&tokens.db).await?;
    let claims = key
        .verify_link(link)
        .ok_or_else(|| invalid_token("Invalid link token"))?;
    let visitor = claims.visitor;
    let now = tokens.clock.now();
    if visitor.expires_at <= now.0.timestamp() {
        return Err(invalid_token("This link has expired"));
    }
    live_state(tokens, &visitor, now).await?;
    let spent = store::spend_link(
        &tokens.db,
        &visitor.tenant,
        visitor.session_id,
        visitor.nonce,
        claims.epoch,
    )
    .await?;
    if !spent {
        return Err(invalid_token(
            "This link was already used, or a newer one was: open the chat from the latest email",
        ));
    }
    let issued = issue(
        tokens,
        &visitor.tenant,
        visitor.session_id,
        visitor.nonce,
        visitor.secret,
    )
    .await?;
    Ok((visitor.session_id, issued))
}

/// Tokens carry whole seconds: the answer says the moment the token
/// really expires.
fn at_second(at: Timestamp) -> Timestamp {
    chrono::DateTime::from_timestamp(at.0.timestamp(), 0)
        .map(Timestamp::from_datetime)
        .unwrap_or(at)
}
