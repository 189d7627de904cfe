//! Writing an entry, inside the transaction of the change it records: the
//! actor and the request (id, address, user agent) are the transaction's
//! (`Tx::actor`, `Tx::request`), so a store function names only what
//! happened.

use uuid::Uuid;

use crate::actor::{Actor, ActorType};
use crate::db::{Query, Tx};
use crate::error::StoreError;
use crate::time::{Timestamp, new_id};

use super::model::{Action, Changes, Target};

/// Writes the entry for `action` on `target` of company `company_id` at
/// `now` in `tx`, unsealed: it commits with the change or not at all, and
/// the sealer chains it after it commits (the commit rings the sealer's
/// bell, [`crate::seal::BELL`]).
pub async fn record(
    tx: &mut Tx,
    company_id: Uuid,
    now: Timestamp,
    action: Action,
    target: Target,
    changes: Changes,
) -> Result<(), StoreError> {
    let actor = tx.actor().clone();
    let request = tx.request().cloned().unwrap_or_default();
    tx.ring_after_commit(super::seal::BELL);
    Query::new(
        "INSERT INTO audit_entries (id, company_id, created_at, actor_type, actor_id, actor_name, \
         action, target_type, target_id, changes, request_id, ip, user_agent) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
    )
    .bind(new_id())
    .bind(company_id)
    .bind(now)
    .bind(actor.kind)
    .bind(actor.id)
    .bind(actor.name)
    .bind(action)
    .bind(target.kind)
    .bind(target.id)
    .bind(changes.to_text())
    .bind(request.request_id)
    .bind(request.ip)
    .bind(request.user_agent)
    .execute(tx)
    .await
}

/// Who made company `company_id`'s first entry of `action` on `target`
/// with exactly these `changes`, if any: for a later change made on that
/// one's behalf (an export's download, by the link its requester was
/// given).
pub async fn maker_of(
    tx: &mut Tx,
    company_id: Uuid,
    action: Action,
    target: &Target,
    changes: &Changes,
) -> Result<Option<Actor>, StoreError> {
    let found: Option<(String, Option<Uuid>, String)> = Query::new(
        "SELECT actor_type, actor_id, actor_name FROM audit_entries WHERE company_id = $1 \
         AND action = $2 AND target_type = $3 AND target_id = $4 AND changes = $5 \
         ORDER BY created_at, id LIMIT 1",
    )
    .bind(company_id)
    .bind(action)
    .bind(target.kind)
    .bind(target.id)
    .bind(changes.to_text())
    .fetch_optional(tx)
    .await?;
    Ok(found.and_then(|(kind, id, name)| {
        Some(Actor {
            kind: kind.parse::<ActorType>().ok()?,
            id,
            name,
        })
    }))
}
