//! Sockets obey their credentials for their whole life, not only at the
//! handshake. Every change that can end or narrow a key (revoke, deactivate,
//! scopes cut, company suspended; from the API or the CLI) publishes a
//! [`Notice`] on the bus topic `credentials`, worked out from the key's
//! record as committed. Each node's dispatcher applies notices to its hub in
//! bus order, before the events published after them, so a message posted
//! after the change never reaches a socket it closed (nor, once a key's
//! ticket scopes are cut, a ticket event it no longer reads: its sockets
//! keep their subscriptions but get only what the key reads now). A key's expiry is the
//! socket's own timer. Changes no notice reached (the CLI without Redis, a
//! lost bus message) are found by each node's re-check of its sockets'
//! credentials every `realtime::RECHECK_INTERVAL`, well within the key cache's life.
//! Agent sessions' sockets close when the session ends and follow their
//! custom role's scopes when it changes, through the same notices
//! ([`sessions`]). Visitor sockets close the same way when their session's
//! tokens are revoked or their identity secret is rotated without grace
//! ([`visitors`]).

use std::sync::Arc;

use tokio::sync::watch;
use uuid::Uuid;

use super::Realtime;
use super::bus::Bus;
use super::hub::{Close, Holder, Hub, TicketReads};
use super::token::SecretFingerprint;
use crate::auth::Scope;
use crate::companies::CompanyStatus;
use crate::db::Db;
use crate::error::StoreError;
use crate::keys::store::{self as key_store, KeyForAuth};
use crate::state::AppState;
use crate::time::Clock;

/// The bus topic of notices.
pub const TOPIC: &str = "credentials";

pub mod sessions;
mod wire;
pub use sessions::{role_changed, sessions_ended};
pub mod visitors;

/// Why a key's sockets close (4401), as their close reason says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Revoked,
    Deactivated,
    Expired,
    ScopeRemoved,
    CompanySuspended,
}

impl Ending {
    const ALL: [Ending; 5] = [
        Ending::Revoked,
        Ending::Deactivated,
        Ending::Expired,
        Ending::ScopeRemoved,
        Ending::CompanySuspended,
    ];

    /// The close frame's reason.
    pub fn reason(self) -> &'static str {
        match self {
            Ending::Revoked => "key revoked",
            Ending::Deactivated => "key deactivated",
            Ending::Expired => "key expired",
            Ending::ScopeRemoved => "scope removed",
            Ending::CompanySuspended => "company suspended",
        }
    }

    fn wire(self) -> &'static str {
        match self {
            Ending::Revoked => "revoked",
            Ending::Deactivated => "deactivated",
            Ending::Expired => "expired",
            Ending::ScopeRemoved => "scope-removed",
            Ending::CompanySuspended => "company-suspended",
        }
    }
}

/// What a change of credentials means for the sockets that hold them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    /// The key's sockets close with 4401.
    KeyEnded { key_id: Uuid, ending: Ending },
    /// The key still reads chat; its sockets may write or not, and read
    /// this much of the ticket channels.
    KeyValid {
        key_id: Uuid,
        may_write: bool,
        tickets: TicketReads,
    },
    /// The company's sockets close: agents 4401, visitors 4403.
    CompanySuspended { company_id: Uuid },
    /// The agent session's sockets close with 4401 (signed out, a new
    /// password, a deactivation, a role change, idle or past its lifetime).
    SessionEnded { session_id: Uuid },
    /// The session is open and its role still reads chat; its sockets may
    /// write or not, and read this much of the ticket channels (its custom
    /// role's scopes may have been changed). Without `chat:read`:
    /// `KeyEnded`'s `ScopeRemoved` close, as `SessionScopeRemoved`.
    SessionValid {
        session_id: Uuid,
        may_write: bool,
        tickets: TicketReads,
    },
    /// The session's role no longer holds `chat:read`: its sockets close
    /// with 4401 `scope removed`.
    SessionScopeRemoved { session_id: Uuid },
    /// The session's visitor sockets opened with a nonce older than
    /// `nonce` close with 4401.
    VisitorTokensRevoked { session_id: Uuid, nonce: i64 },
    /// The entity's verified visitors whose secret is not `current` close
    /// with 4401 (a rotation without grace).
    IdentitySecretRotated {
        entity_id: Uuid,
        current: SecretFingerprint,
    },
}

impl Notice {
    /// What the key's record as it was read (`None`: deleted) means; its
    /// expiry is judged by the database's clock at the read.
    pub fn for_key(key_id: Uuid, record: Option<&KeyForAuth>) -> Notice {
        let Some(record) = record else {
            return Notice::KeyEnded {
                key_id,
                ending: Ending::Revoked,
            };
        };
        let ending = if record.is_expired() {
            Some(Ending::Expired)
        } else if !record.is_active {
            Some(Ending::Deactivated)
        } else if record.company_status != CompanyStatus::Active {
            Some(Ending::CompanySuspended)
        } else if !record.scopes.contains(Scope::ChatRead) {
            Some(Ending::ScopeRemoved)
        } else {
            None
        };
        match ending {
            Some(ending) => Notice::KeyEnded { key_id, ending },
            None => Notice::KeyValid {
                key_id,
                may_write: record.scopes.contains(Scope::ChatWrite),
                // A key holds no role's grant of notes (docs/api.md,
                // "Roles"): its scopes alone decide.
                tickets: TicketReads::of(&record.scopes, false),
            },
        }
    }

    /// Closes or narrows the matching sockets of this node.
    pub fn apply(&self, hub: &Hub) {
        match *self {
            Notice::KeyEnded { key_id, ending } => {
                hub.close_where(
                    |h| matches!(h, Holder::Key { key_id: k, .. } if *k == key_id),
                    Close::unauthorized(ending.reason()),
                    None,
                );
            }
            Notice::KeyValid {
                key_id,
                may_write,
                tickets,
            } => hub.set_key_rights(key_id, may_write, tickets),
            Notice::SessionEnded { session_id } => {
                sessions::close(hub, session_id, "session ended");
            }
            Notice::SessionScopeRemoved { session_id } => {
                sessions::close(hub, session_id, Ending::ScopeRemoved.reason());
            }
            Notice::SessionValid {
                session_id,
                may_write,
                tickets,
            } => hub.set_session_rights(session_id, may_write, tickets),
            Notice::CompanySuspended { company_id } => {
                let reason = Ending::CompanySuspended.reason();
                hub.close_where(
                    |h| h.company_id() == company_id,
                    Close::unauthorized(reason),
                    Some(Close::forbidden(reason)),
                );
            }
            Notice::VisitorTokensRevoked { session_id, nonce } => {
                visitors::close_revoked(hub, session_id, nonce)
            }
            Notice::IdentitySecretRotated { entity_id, current } => {
                visitors::close_rotated(hub, entity_id, current)
            }
        }
    }
}

/// Publishes `notice` to every node, ahead of the events of `company` (when
/// known) published after it.
pub async fn publish(bus: &Bus, company_id: Option<Uuid>, notice: Notice) {
    match company_id {
        Some(company_id) => {
            bus.publish_ahead_of(company_id, TOPIC, notice.encode())
                .await
        }
        // A key already deleted: its company is no longer known, and only
        // the node-wide channel is left (on a cluster the company's events
        // may then overtake it until the sockets' re-check closes them).
        None => bus.publish(TOPIC, notice.encode()).await,
    }
}

/// Tells every node what key `key_id` now allows, read from the store after
/// the change has committed. Call after revoking or changing a key.
pub async fn key_changed(db: &Db, bus: &Bus, key_id: Uuid) {
    match key_store::find_for_auth_by_id(db, key_id).await {
        Ok(record) => {
            let notice = Notice::for_key(key_id, record.as_ref());
            publish(bus, record.map(|record| record.company_id), notice).await;
        }
        // The nodes' re-check will find the change instead.
        Err(error) => tracing::warn!(%error, %key_id, "could not announce a key change"),
    }
}

/// Tells every node to close the sockets of a company just suspended.
pub async fn company_suspended(bus: &Bus, company_id: Uuid) {
    publish(
        bus,
        Some(company_id),
        Notice::CompanySuspended { company_id },
    )
    .await;
}

/// Re-checks the credentials of this node's sockets until shutdown.
pub async fn run_recheck(
    db: Db,
    realtime: Arc<Realtime>,
    clock: Clock,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut ticker = tokio::time::interval(realtime.recheck_interval());
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut failing = false;
    loop {
        tokio::select! {
            _ = ticker.tick() => match recheck_once(&db, &realtime, &clock).await {
                Ok(()) if failing => {
                    tracing::info!("socket credentials re-check works again");
                    failing = false;
                }
                Ok(()) => {}
                // Logged once per outage, not at every tick.
                Err(error) if !failing => {
                    tracing::warn!(%error, "socket credentials re-check failed; retrying");
                    failing = true;
                }
                Err(_) => {}
            },
            _ = super::shutdown::stopping(&mut shutdown) => return,
        }
    }
}

/// Reads, for each key with a socket on this node, its state now, and
/// applies it; then the sessions of the visitor sockets, in batches.
pub async fn recheck_once(db: &Db, realtime: &Realtime, clock: &Clock) -> Result<(), StoreError> {
    let holders = realtime.hub.holders();
    for holder in &holders {
        match *holder {
            Holder::Key { key_id, .. } => key_notice(db, key_id).await?.apply(&realtime.hub),
            Holder::Agent { session_id, .. } => {
                let idle = realtime.session_idle();
                sessions::notice(db, session_id, clock, idle)
                    .await?
                    .apply(&realtime.hub);
            }
            Holder::Visitor { .. } => {}
        }
    }
    visitors::recheck(db, realtime, clock.now(), &holders).await
}

/// Applies the state now of one holder's credentials to its sockets on
/// this node (a failure is left to the periodic re-check). It takes the
/// state because a socket carries the state.
pub async fn recheck_holder(state: &AppState, holder: Holder) {
    let checked = match holder {
        Holder::Key { key_id, .. } => key_notice(&state.db, key_id)
            .await
            .map(|notice| notice.apply(&state.realtime.hub)),
        Holder::Agent { session_id, .. } => sessions::notice(
            &state.db,
            session_id,
            &state.clock,
            state.access.session_idle,
        )
        .await
        .map(|notice| notice.apply(&state.realtime.hub)),
        Holder::Visitor { .. } => {
            let now = state.clock.now();
            visitors::recheck(&state.db, &state.realtime, now, &[holder]).await
        }
    };
    if let Err(error) = checked {
        tracing::debug!(%error, "socket credentials check failed");
    }
}

/// What key `key_id` allows now.
async fn key_notice(db: &Db, key_id: Uuid) -> Result<Notice, StoreError> {
    let record = key_store::find_for_auth_by_id(db, key_id).await?;
    Ok(Notice::for_key(key_id, record.as_ref()))
}

#[cfg(test)]
mod tests;
