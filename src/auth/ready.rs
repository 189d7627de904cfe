//! A key as authentication uses it, built once when it is cached: the
//! principal (scopes already a bit set), the key's standing, and its
//! constant rate-limit header values. A request on a cached key then only
//! checks the expiry and copies the principal.

use std::time::Duration;

use uuid::Uuid;

use super::{KeyOwner, Principal, Tenant};
use crate::companies::CompanyStatus;
use crate::error::{ApiError, ErrorCode};
use crate::keys::store::KeyForAuth;
use crate::ratelimit::KeyHeaders;
use crate::time::Timestamp;

/// Why an existing key is refused whatever the time, if it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standing {
    Usable,
    Inactive,
    Suspended,
}

#[derive(Debug)]
pub struct ReadyKey {
    principal: Principal,
    standing: Standing,
    headers: KeyHeaders,
}

impl ReadyKey {
    /// `window` is the rate-limit window the policy header names;
    /// `node_now` is this node's clock when `record` was read, so the
    /// key's expiry is kept on this node's clock as the database's clock
    /// reaches it (`KeyForAuth::expiry_on_node`).
    pub fn new(record: &KeyForAuth, window: Duration, node_now: Timestamp) -> Self {
        let owner = record.user_id.map(|user_id| KeyOwner {
            user_id,
            name: record.owner_name.as_deref().unwrap_or_default().into(),
        });
        // A personal key's record is already settled by its agent's
        // standing and role (`KeyForAuth::settled`).
        let standing = if !record.is_active {
            Standing::Inactive
        } else if record.company_status != CompanyStatus::Active {
            Standing::Suspended
        } else {
            Standing::Usable
        };
        // A personal key of an agent limited to their teams sees what the
        // agent sees (`KeyForAuth::settled` narrows its scopes likewise).
        let mut tenant = Tenant::new(record.company_id, record.mode);
        if let (Some(user_id), Some(true)) = (record.user_id, record.owner_teams_only) {
            tenant.visibility = super::Visibility::TeamsOf { member: user_id };
        }
        ReadyKey {
            principal: Principal {
                key_id: record.id,
                key_name: record.name.as_str().into(),
                tenant,
                scopes: record.scopes,
                rate_limit: record.rate_limit,
                expires_at: record.expiry_on_node(node_now),
                agent: None,
                owner,
            },
            standing,
            headers: KeyHeaders::new(allowance(record.rate_limit), window),
        }
    }

    pub fn key_id(&self) -> Uuid {
        self.principal.key_id
    }

    /// The agent a personal key belongs to.
    pub fn owner_id(&self) -> Option<Uuid> {
        self.principal.owner.as_ref().map(|owner| owner.user_id)
    }

    pub fn company_id(&self) -> Uuid {
        self.principal.tenant.company_id
    }

    /// The rate-limit header values of every response on this key.
    pub fn headers(&self) -> &KeyHeaders {
        &self.headers
    }

    /// The principal, or the 401/403 the key gets in its state at `now`
    /// (the node's clock, against the expiry moved onto it), in the
    /// documented order: expired, inactive, suspended company.
    pub fn principal(&self, now: Timestamp) -> Result<Principal, ApiError> {
        if self
            .principal
            .expires_at
            .is_some_and(|expiry| expiry <= now)
        {
            return Err(ApiError::unauthorized(
                ErrorCode::ExpiredApiKey,
                "API key has expired",
            ));
        }
        match self.standing {
            Standing::Usable => Ok(self.principal.clone()),
            Standing::Inactive => Err(ApiError::unauthorized(
                ErrorCode::InvalidApiKey,
                "API key is inactive",
            )),
            Standing::Suspended => Err(ApiError::account_suspended()),
        }
    }
}

/// The requests per window a key's stored `rate_limit` allows (at least 1).
pub fn allowance(rate_limit: i64) -> u64 {
    u64::try_from(rate_limit).unwrap_or(1).max(1)
}
