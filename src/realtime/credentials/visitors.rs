//! Visitor sockets obey their token's session as API-key sockets obey their
//! key: revoking a session's visitor tokens, or rotating an entity's
//! identity secret without grace, closes the sockets they opened (4401),
//! on every node, through the same notices; each node's re-check reads the
//! sessions of its visitor sockets in batches and closes those a notice
//! missed (and those whose secret's grace has run out).

use std::collections::{HashMap, HashSet};

use uuid::Uuid;

use super::Notice;
use crate::companies::CompanyStatus;
use crate::db::Db;
use crate::error::StoreError;
use crate::realtime::Realtime;
use crate::realtime::bus::Bus;
use crate::realtime::hub::{Close, Holder, Hub};
use crate::realtime::token::{self, SecretFingerprint};
use crate::time::Timestamp;
use crate::widget::store::{self as widget_store, TokenState};

/// The close of a visitor socket whose session's tokens were revoked.
pub const REVOKED: Close = Close::unauthorized("visitor token revoked");
/// The close of a verified visitor's socket whose identity secret was
/// rotated away.
pub const SECRET_ROTATED: Close = Close::unauthorized("identity secret rotated");

/// Sessions read per query by the re-check.
const BATCH: usize = 500;

/// Closes the local visitor sockets of `session_id` opened with a nonce
/// older than `nonce` (the session's nonce after the revocation).
pub(super) fn close_revoked(hub: &Hub, session_id: Uuid, nonce: i64) {
    hub.close_where(
        |h| matches!(h, Holder::Visitor { session_id: s, nonce: n, .. } if *s == session_id && *n < nonce),
        REVOKED,
        Some(REVOKED),
    );
}

/// Closes the local sockets of the entity's verified visitors whose
/// secret is not `current`, the only one that vouches after a rotation
/// without grace.
pub(super) fn close_rotated(hub: &Hub, entity_id: Uuid, current: SecretFingerprint) {
    hub.close_where(
        |h| {
            matches!(h, Holder::Visitor { entity_id: e, secret: Some(print), .. }
                if *e == entity_id && *print != current)
        },
        SECRET_ROTATED,
        Some(SECRET_ROTATED),
    );
}

/// Wire form of a fingerprint in a notice.
pub(super) fn encode_print(print: &SecretFingerprint) -> String {
    hex::encode(print)
}

pub(super) fn decode_print(text: &str) -> Option<SecretFingerprint> {
    let mut print = [0u8; 8];
    hex::decode_to_slice(text, &mut print).ok()?;
    Some(print)
}

/// Tells every node that session `session_id`'s tokens older than `nonce`
/// are revoked. Call after the nonce has moved on.
pub async fn tokens_revoked(bus: &Bus, company_id: Uuid, session_id: Uuid, nonce: i64) {
    let notice = Notice::VisitorTokensRevoked { session_id, nonce };
    super::publish(bus, Some(company_id), notice).await;
}

/// Tells every node that only `secret` vouches for the entity's visitors
/// now. Call after a rotation without grace has committed.
pub async fn secret_rotated(bus: &Bus, company_id: Uuid, entity_id: Uuid, secret: &str) {
    let notice = Notice::IdentitySecretRotated {
        entity_id,
        current: token::fingerprint(secret),
    };
    super::publish(bus, Some(company_id), notice).await;
}

/// Closes the visitor sockets among `holders` whose session's tokens now
/// end them: the sessions are read `BATCH` at a time, not one per socket.
pub(super) async fn recheck(
    db: &Db,
    realtime: &Realtime,
    now: Timestamp,
    holders: &[Holder],
) -> Result<(), StoreError> {
    let sessions: Vec<Uuid> = holders
        .iter()
        .filter_map(|h| match h {
            Holder::Visitor { session_id, .. } => Some(*session_id),
            Holder::Key { .. } | Holder::Agent { .. } => None,
        })
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let mut states: HashMap<Uuid, TokenState> = HashMap::new();
    for batch in sessions.chunks(BATCH) {
        for state in widget_store::token_states(db, batch).await? {
            states.insert(state.session_id, state);
        }
    }
    let hub = &realtime.hub;
    let mut suspended = HashSet::new();
    for holder in holders {
        let Holder::Visitor {
            company_id,
            session_id,
            ..
        } = holder
        else {
            continue;
        };
        // A session gone (deleted with its chat) is left to its own end.
        let Some(session) = states.get(session_id) else {
            continue;
        };
        if session.company_status != CompanyStatus::Active {
            if suspended.insert(*company_id) {
                Notice::CompanySuspended {
                    company_id: *company_id,
                }
                .apply(hub);
            }
        } else if let Some(close) = ending(holder, session, now) {
            hub.close_where(|h| h == holder, close, Some(close));
        }
    }
    Ok(())
}

/// How a visitor socket of `holder` closes given its session's state now,
/// or `None` while its token's nonce and secret still hold.
fn ending(holder: &Holder, session: &TokenState, now: Timestamp) -> Option<Close> {
    let Holder::Visitor { nonce, secret, .. } = holder else {
        return None;
    };
    if *nonce != session.token_nonce {
        return Some(REVOKED);
    }
    let print = (*secret)?;
    let vouched = session
        .live_secrets(now)
        .any(|secret| token::fingerprint(secret) == print);
    (!vouched).then_some(SECRET_ROTATED)
}
