//! The audit entries of a team's changes, written in their transaction.

use uuid::Uuid;

use crate::audit::{Action, Changes, Target, TargetType};
use crate::auth::Tenant;
use crate::db::Tx;
use crate::error::StoreError;
use crate::time::Timestamp;

/// Writes the entry of `action` on team `id` of `tenant` in `tx`; an
/// update that changed nothing writes none.
pub(crate) async fn record(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    now: Timestamp,
    action: Action,
    changes: Changes,
) -> Result<(), StoreError> {
    if action == Action::TeamUpdated && changes.is_empty_update() {
        return Ok(());
    }
    let target = Target::new(TargetType::Team, id);
    crate::audit::record(tx, tenant.company_id, now, action, target, changes).await
}
