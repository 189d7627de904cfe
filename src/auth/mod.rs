//! Who is calling: API keys, their scopes, and the tenant (company + mode)
//! every store function is given so that no query can forget it.

pub mod access;
pub mod by_id;
pub mod cache;
pub use infra::key;
pub mod middleware;
pub mod ready;
pub mod session;
pub mod throttle;
pub use vocab::scope;

use uuid::Uuid;

pub use scope::{Scope, ScopeSet};
pub use vocab::tenant::{Mode, Tenant, Visibility};

use crate::actor::Actor;

/// The authenticated caller, put into request extensions by the auth
/// middleware and read by handlers through the `Principal` extractor.
#[derive(Debug, Clone)]
pub struct Principal {
    /// The key's id; for an agent signed in by session, the user's id (the
    /// rate limit's bucket either way: an agent has an allowance of their
    /// own).
    pub key_id: Uuid,
    /// The key's name, to name it as the actor of its changes (shared:
    /// the principal is copied for every request).
    pub key_name: std::sync::Arc<str>,
    pub tenant: Tenant,
    pub scopes: ScopeSet,
    pub rate_limit: i64,
    /// When the key expires, if it does (open sockets close then).
    pub expires_at: Option<crate::time::Timestamp>,
    /// The agent, when the request is signed in by session cookie.
    pub agent: Option<Agent>,
    /// The agent a personal key belongs to (its changes are theirs).
    pub owner: Option<KeyOwner>,
}

/// The agent who minted a personal key, as its requests act.
#[derive(Debug, Clone)]
pub struct KeyOwner {
    pub user_id: Uuid,
    pub name: std::sync::Arc<str>,
}

/// An agent signed in by session.
#[derive(Debug, Clone)]
pub struct Agent {
    pub session_id: Uuid,
    pub user_id: Uuid,
    pub name: std::sync::Arc<str>,
    /// The agent's role reads and posts internal notes without
    /// `tickets:write` (the built-in `viewer`).
    pub internal_notes: bool,
}

impl Principal {
    /// Whether this caller reads internal notes: a key by its scopes
    /// (`tickets::model::reads_internal_notes`), an agent also by a role
    /// that grants notes without `tickets:write`.
    pub fn reads_internal_notes(&self) -> bool {
        ::tickets::model::reads_internal_notes(&self.scopes) || self.posts_only_internal_notes()
    }

    /// Whether this caller may post internal notes, and nothing else, on
    /// a ticket: an agent whose role grants notes but not `tickets:write`.
    pub fn posts_only_internal_notes(&self) -> bool {
        !self.scopes.contains(Scope::TicketsWrite)
            && self.scopes.contains(Scope::TicketsRead)
            && self
                .agent
                .as_ref()
                .is_some_and(|agent| agent.internal_notes)
    }

    /// Who this caller's changes are made by: the agent signed in by
    /// session, or the agent whose personal key it is, otherwise the key.
    pub fn actor(&self) -> Actor {
        match (&self.agent, &self.owner) {
            (Some(agent), _) => Actor::agent(agent.user_id, &*agent.name),
            (None, Some(owner)) => Actor::agent(owner.user_id, &*owner.name),
            (None, None) => Actor::key(self.key_id, &*self.key_name),
        }
    }

    /// The user this caller acts as: the agent signed in, or the owner of
    /// a personal key; None for a company key.
    pub fn acting_user(&self) -> Option<Uuid> {
        match (&self.agent, &self.owner) {
            (Some(agent), _) => Some(agent.user_id),
            (None, Some(owner)) => Some(owner.user_id),
            (None, None) => None,
        }
    }

    /// The store handle for this caller's changes: `db` naming the caller
    /// as their actor and `request` as where they came from (what the
    /// audit log records beside them).
    pub fn acting(&self, db: &crate::db::Db, request: crate::extract::Requested) -> crate::db::Db {
        db.acting(self.actor()).with_request(request.0)
    }
}

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Principal {
    type Rejection = crate::error::ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _state: &S,
    ) -> Result<Self, Self::Rejection> {
        parts.extensions.get::<Principal>().cloned().ok_or_else(|| {
            crate::error::ApiError::unauthorized(
                crate::error::ErrorCode::MissingApiKey,
                "X-API-Key header is required",
            )
        })
    }
}
