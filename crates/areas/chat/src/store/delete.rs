//! Deleting closed chat sessions (the retention passes), in the caller's
//! transaction: the rows, their messages and what else names them going by
//! cascade, and the change feed's deletes, one for each message (the
//! database deletes them with their session) and then one for the session,
//! so a client mirroring the desk through the feed ends without either, as
//! it does for a deleted ticket and its comments.

use uuid::Uuid;

use crate::auth::Tenant;
use crate::db::{Query, Tx};
use crate::error::StoreError;
use crate::events::{self, RecordChange, RecordType};
use crate::time::Timestamp;

/// Deletes `sessions` (each of its tenant) in `tx` with their feed deletes
/// stamped `now`, in the order given; a session already gone gets none.
/// Answers how many went.
pub async fn delete_sessions(
    tx: &mut Tx,
    sessions: &[(Tenant, Uuid)],
    now: Timestamp,
) -> Result<u64, StoreError> {
    let mut deleted = 0;
    for (tenant, id) in sessions {
        if delete_session(tx, tenant, *id, now).await? {
            deleted += 1;
        }
    }
    Ok(deleted)
}

/// One session's delete; false when the tenant has no such session.
/// Statement by statement (a read of its message ids, the delete, a feed
/// entry each): the retention passes are background work in batches of
/// 100 sessions, where one statement per row costs nothing a request waits
/// for, and each entry goes through the feed's one writer.
async fn delete_session(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    now: Timestamp,
) -> Result<bool, StoreError> {
    // Read before the delete takes them with their session.
    let messages: Vec<Uuid> = Query::new("SELECT m.id FROM chat_messages m WHERE m.session_id = ")
        .push_bind(id)
        .push(" AND ")
        .push_tenant(tenant, "m")
        .push(" ORDER BY m.created_at, m.id")
        .fetch_column(&mut *tx)
        .await?;
    let deleted =
        Query::new("DELETE FROM chat_sessions WHERE id = $1 AND company_id = $2 AND mode = $3")
            .bind(id)
            .bind_tenant(tenant)
            .rows_affected(&mut *tx)
            .await?;
    if deleted == 0 {
        return Ok(false);
    }
    for message in messages {
        let change = RecordChange::delete(RecordType::ChatMessage, message);
        events::record_change(&mut *tx, tenant, &change, now).await?;
    }
    let change = RecordChange::delete(RecordType::ChatSession, id);
    events::record_change(&mut *tx, tenant, &change, now).await?;
    Ok(true)
}
