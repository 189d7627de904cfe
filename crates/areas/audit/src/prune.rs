//! Retention: drops a company's oldest sealed entries, only from the start
//! of its chain, and moves the chain's start (the checkpoint: the first
//! entry kept and the hash before it) so that what remains still verifies.
//! Unsealed entries and everything after the first entry to keep stay.
//! A prune that drops entries records itself (`audit.pruned`) in its
//! transaction: the entry is sealed after the ones kept, so the chain
//! that verifies from the checkpoint says that its start was cut.

use uuid::Uuid;

use crate::db::{Db, Query};
use crate::error::StoreError;
use crate::time::Timestamp;

use super::model::{Action, Changes, Target, TargetType};
use super::seal::hold_chain;

/// Drops company `company_id`'s sealed entries written before `before`, up
/// to the first one (in chain order) written at or after it; stamps the
/// checkpoint `now` and records the cut (made by the handle's actor, the
/// service's for the CLI and the retention pass). Answers how many it
/// dropped.
pub async fn prune(
    db: &Db,
    company_id: Uuid,
    before: Timestamp,
    now: Timestamp,
) -> Result<u64, StoreError> {
    let mut tx = db.begin().await?;
    let (head, _) = hold_chain(&mut tx, company_id).await?;
    // The first entry to keep: the first sealed one at or after the cut,
    // else the next one to be sealed.
    let keep: Option<i64> = Query::new(
        "SELECT MIN(seq) FROM audit_entries WHERE company_id = $1 AND seq IS NOT NULL \
         AND created_at >= $2",
    )
    .bind(company_id)
    .bind(before)
    .fetch_scalar(&mut tx)
    .await?;
    let keep = keep.unwrap_or(head + 1);
    let start: i64 = Query::new("SELECT start_seq FROM audit_chains WHERE company_id = $1")
        .bind(company_id)
        .fetch_scalar(&mut tx)
        .await?;
    if keep <= start {
        tx.commit().await?;
        return Ok(0);
    }
    // The hash the first entry kept follows: the last dropped entry's.
    let checkpoint: String =
        Query::new("SELECT hash FROM audit_entries WHERE company_id = $1 AND seq = $2")
            .bind(company_id)
            .bind(keep - 1)
            .fetch_scalar(&mut tx)
            .await?;
    let dropped = Query::new(
        "DELETE FROM audit_entries WHERE company_id = $1 AND seq IS NOT NULL AND seq < $2",
    )
    .bind(company_id)
    .bind(keep)
    .rows_affected(&mut tx)
    .await?;
    Query::new(
        "UPDATE audit_chains SET start_seq = $2, start_hash = $3, pruned_at = $4 \
         WHERE company_id = $1",
    )
    .bind(company_id)
    .bind(keep)
    .bind(checkpoint)
    .bind(now)
    .execute(&mut tx)
    .await?;
    let changes = Changes::none()
        .with("cutOff", serde_json::to_value(before)?)
        .with("dropped", dropped.into())
        .with("firstKept", keep.into());
    let target = Target::new(TargetType::Company, company_id);
    let action = Action::AuditRetentionPruned;
    super::record(&mut tx, company_id, now, action, target, changes).await?;
    tx.commit().await?;
    Ok(dropped)
}
