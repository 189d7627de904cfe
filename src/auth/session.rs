//! Authentication by an agent's session cookie: the cookie's secret is
//! looked up by its SHA-256, the session read once and cached on the node
//! for at most `SESSION_CACHE_TTL` (as keys are), so a request signed in by
//! cookie costs what one by key does. Ending a session, or every session of
//! a user, publishes an invalidation on the auth bus topic that every node
//! applies at once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, Method, header};
use uuid::Uuid;

use super::cache::Digest;
use super::{Agent, Principal, ScopeSet, Tenant, Visibility};
use crate::accounts::sessions::{self as store, SessionForAuth};
use crate::companies::CompanyStatus;
use crate::db::Db;
use crate::error::{ApiError, ErrorCode};
use crate::generation::Generation;
use crate::ratelimit::HotMap;
use crate::time::{Clock, Timestamp};

/// The session cookie's name.
pub const COOKIE: &str = "sd_session";
/// The header a cookie-authenticated request that changes anything carries.
pub const CSRF_HEADER: &str = "x-csrf-token";
/// How long a cached session may be used without a database read.
pub const SESSION_CACHE_TTL: Duration = Duration::from_secs(10);
/// `last_seen_at` is written at most this often per session.
pub const LAST_SEEN_EVERY: Duration = Duration::from_secs(60);
/// Each agent's requests per rate-limit window: an agent's own allowance,
/// not a share of a key's.
pub const AGENT_RATE_LIMIT: i64 = 10_000;
/// Entries are swept when the cache grows past this.
const SWEEP_ABOVE: usize = 10_000;

/// A session as authentication uses it, built once when it is cached.
#[derive(Debug)]
pub struct ReadySession {
    /// The company asks for a second factor this agent has not set up.
    setup_required: bool,
    principal: Principal,
    session_id: Uuid,
    user_id: Uuid,
    csrf_token: String,
    last_seen_at: Timestamp,
    expires_at: Timestamp,
    usable: bool,
}

impl ReadySession {
    pub fn new(record: &SessionForAuth) -> Self {
        // An agent the company asks for a second factor holds no scope
        // until they have set one up (the `/auth/totp` routes need none).
        let setup_required = !record.user_totp_enabled
            && crate::settings::store::requires_two_factor(&record.company_settings);
        let role = record.role();
        let scopes = if setup_required {
            ScopeSet::empty()
        } else {
            role.scopes
        };
        // A role limited to the agent's teams: every store read of a
        // team-owned record is narrowed by the tenant's visibility.
        let visibility = match role.teams_only {
            true => Visibility::TeamsOf {
                member: record.user_id,
            },
            false => Visibility::All,
        };
        ReadySession {
            setup_required,
            principal: Principal {
                key_id: record.user_id,
                tenant: Tenant {
                    visibility,
                    ..record.tenant()
                },
                scopes,
                rate_limit: AGENT_RATE_LIMIT,
                key_name: std::sync::Arc::from(""),
                expires_at: Some(record.expires_at),
                agent: Some(Agent {
                    session_id: record.id,
                    user_id: record.user_id,
                    name: Arc::from(record.user_name.as_str()),
                    internal_notes: !setup_required && role.internal_notes,
                }),
                owner: None,
            },
            session_id: record.id,
            user_id: record.user_id,
            csrf_token: record.csrf_token.clone(),
            last_seen_at: record.last_seen_at,
            expires_at: record.expires_at,
            usable: record.ended_at.is_none()
                && record.user_active
                && record.company_status == CompanyStatus::Active,
        }
    }

    pub fn session_id(&self) -> Uuid {
        self.session_id
    }

    pub fn user_id(&self) -> Uuid {
        self.user_id
    }

    /// Whether the agent must set up a second factor before anything else.
    pub fn two_factor_setup_required(&self) -> bool {
        self.setup_required
    }

    pub fn company_id(&self) -> Uuid {
        self.principal.tenant.company_id
    }

    /// The session's CSRF token, which `GET /auth/me` hands out.
    pub fn csrf_token(&self) -> &str {
        &self.csrf_token
    }

    /// The principal, or the 401 the session gets at `now`: ended, past its
    /// absolute lifetime, or idle for longer than `idle` (counted from the
    /// last use the store knows, written once a minute).
    pub fn principal(&self, now: Timestamp, idle: Duration) -> Result<Principal, ApiError> {
        let idle_until = self.last_seen_at.plus(idle + LAST_SEEN_EVERY);
        if !self.usable || self.expires_at <= now || idle_until <= now {
            return Err(session_ended());
        }
        Ok(self.principal.clone())
    }

    /// Whether `headers` carry this session's CSRF token (compared in
    /// constant time).
    pub fn csrf_matches(&self, headers: &HeaderMap) -> bool {
        use subtle::ConstantTimeEq;
        headers
            .get(CSRF_HEADER)
            .map(|presented| {
                presented
                    .as_bytes()
                    .ct_eq(self.csrf_token.as_bytes())
                    .into()
            })
            .unwrap_or(false)
    }
}

/// The 403 of a change made with the cookie but without the CSRF token.
pub fn csrf_failed() -> ApiError {
    ApiError::new(
        axum::http::StatusCode::FORBIDDEN,
        ErrorCode::CsrfFailed,
        "A change made with the session cookie needs the X-CSRF-Token header \
         (GET /api/v1/auth/me gives its value)",
    )
}

/// Whether a request with `method` changes anything (and so needs the
/// CSRF token when it is authenticated by cookie).
pub fn changes_state(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The session secret in `headers`' cookies, if there is one.
pub fn cookie_secret(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.trim())
        .filter(|value| !value.is_empty())
}

struct Cached {
    session: Arc<ReadySession>,
    fetched: Instant,
}

/// The node's cache of sessions by the digest of their secret.
#[derive(Default)]
pub struct SessionCache {
    entries: HotMap<Digest, Cached>,
    generation: Generation,
    /// When this node last wrote each session's `last_seen_at`.
    last_seen: super::throttle::WriteThrottle,
}

impl SessionCache {
    pub fn new() -> Self {
        Self::default()
    }

    fn get(&self, digest: &Digest) -> Option<Arc<ReadySession>> {
        let entry = self.entries.get(digest)?;
        (entry.fetched.elapsed() < SESSION_CACHE_TTL).then(|| Arc::clone(&entry.session))
    }

    fn insert(&self, digest: Digest, session: Arc<ReadySession>, generation: u64) {
        if self.entries.len() > SWEEP_ABOVE {
            self.entries
                .retain(|_, cached| cached.fetched.elapsed() < SESSION_CACHE_TTL);
        }
        let cached = Cached {
            session,
            fetched: Instant::now(),
        };
        self.generation
            .insert_if_current(generation, &self.entries, digest, cached);
    }

    /// Forgets session `id` on this node.
    pub fn forget_session(&self, id: Uuid) {
        self.generation.bump();
        self.entries.retain(|_, c| c.session.session_id() != id);
    }

    /// Forgets every session of user `id` on this node.
    pub fn forget_user(&self, id: Uuid) {
        self.generation.bump();
        self.entries.retain(|_, c| c.session.user_id() != id);
    }

    /// Forgets every session of company `id` on this node.
    pub fn forget_company(&self, id: Uuid) {
        self.generation.bump();
        self.entries.retain(|_, c| c.session.company_id() != id);
    }

    pub fn clear(&self) {
        self.generation.bump();
        self.entries.clear();
    }

    /// Records use of session `id` at `now`, at most once a minute per
    /// session and node, after the response.
    pub fn touch(&self, db: &Db, clock: &Clock, id: Uuid, now: Timestamp) {
        if !self.last_seen.due(id, clock.instant(), LAST_SEEN_EVERY) {
            return;
        }
        let db = db.clone();
        tokio::spawn(async move {
            if let Err(error) = store::touch(&db, id, now).await {
                tracing::debug!(%error, session = %id, "could not record lastSeenAt");
            }
        });
    }
}

/// The cached (or now cached) session whose cookie secret is `secret`;
/// 401 when there is none.
pub async fn ready_session(
    cache: &SessionCache,
    db: &Db,
    secret: &str,
) -> Result<Arc<ReadySession>, ApiError> {
    let digest = crate::auth::key::digest(secret);
    if let Some(session) = cache.get(&digest) {
        return Ok(session);
    }
    let generation = cache.generation.current();
    let hex_digest = hex::encode(digest);
    let lookup = store::find_for_auth(db, &hex_digest);
    let record = Box::pin(lookup)
        .await
        .map_err(ApiError::from)?
        .ok_or_else(session_ended)?;
    let session = Arc::new(ReadySession::new(&record));
    cache.insert(digest, Arc::clone(&session), generation);
    Ok(session)
}

/// The 401 of a session that has ended (or never was): its cookie and the
/// socket tokens it minted get the same answer.
fn session_ended() -> ApiError {
    ApiError::unauthorized(
        ErrorCode::SessionExpired,
        "The session has ended; sign in again",
    )
}

/// The principal of session `id` as it stands now (for a socket token the
/// session minted: it names the session, not its secret), or the 401 its
/// cookie would get. Read from the store each time: a handshake is rare
/// next to requests, and the cache is keyed by the secret.
pub async fn principal_by_session_id(
    access: &super::access::Access,
    db: &Db,
    id: Uuid,
) -> Result<Principal, ApiError> {
    let record = store::find_for_auth_by_id(db, id)
        .await
        .map_err(ApiError::from)?
        .ok_or_else(session_ended)?;
    ReadySession::new(&record).principal(access.clock().now(), access.session_idle)
}
