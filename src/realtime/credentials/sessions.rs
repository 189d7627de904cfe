//! Agent sessions' sockets: closed when the session ends, and narrowed (or
//! closed) when the custom role it holds has its scopes changed, through
//! the same notices as a key's sockets.

use uuid::Uuid;

use super::{Notice, publish};
use crate::auth::Scope;
use crate::db::Db;
use crate::error::StoreError;
use crate::realtime::bus::Bus;
use crate::realtime::hub::{Close, Holder, Hub, TicketReads};
use crate::time::Clock;

/// Closes the local sockets of agent session `session_id` with 4401 `reason`.
pub(super) fn close(hub: &Hub, session_id: Uuid, reason: &'static str) {
    hub.close_where(
        |h| matches!(h, Holder::Agent { session_id: s, .. } if *s == session_id),
        Close::unauthorized(reason),
        None,
    );
}

/// What agent session `session_id` allows now (the clock's): ended
/// (signed out, idle, past its lifetime, its company suspended), no longer
/// reading chat, or what its role's scopes let its sockets write and read.
pub(super) async fn notice(
    db: &Db,
    session_id: Uuid,
    clock: &Clock,
    idle: std::time::Duration,
) -> Result<Notice, StoreError> {
    let record = crate::accounts::sessions::find_for_auth_by_id(db, session_id).await?;
    let principal = record.and_then(|record| {
        crate::auth::session::ReadySession::new(&record)
            .principal(clock.now(), idle)
            .ok()
    });
    Ok(match principal {
        None => Notice::SessionEnded { session_id },
        Some(principal) if !principal.scopes.contains(Scope::ChatRead) => {
            Notice::SessionScopeRemoved { session_id }
        }
        Some(principal) => Notice::SessionValid {
            session_id,
            may_write: principal.scopes.contains(Scope::ChatWrite),
            tickets: TicketReads::of(&principal.scopes, principal.reads_internal_notes()),
        },
    })
}

/// Tells every node to close the sockets of agent sessions `ended`.
pub async fn sessions_ended(bus: &Bus, company_id: Uuid, ended: &[Uuid]) {
    for session_id in ended {
        publish(
            bus,
            Some(company_id),
            Notice::SessionEnded {
                session_id: *session_id,
            },
        )
        .await;
    }
}

/// Tells every node what the open sessions of custom role `role_id`'s
/// holders allow now, read after the role's change has committed. Call
/// after changing a role's scopes.
pub async fn role_changed(
    db: &Db,
    bus: &Bus,
    clock: &Clock,
    idle: std::time::Duration,
    company_id: Uuid,
    role_id: Uuid,
) {
    let announced = async {
        for session_id in crate::accounts::sessions::open_of_role(db, company_id, role_id).await? {
            let notice = notice(db, session_id, clock, idle).await?;
            publish(bus, Some(company_id), notice).await;
        }
        Ok::<(), StoreError>(())
    };
    // The nodes' re-check will find the change instead.
    if let Err(error) = announced.await {
        tracing::warn!(%error, %role_id, "could not announce a role change");
    }
}
