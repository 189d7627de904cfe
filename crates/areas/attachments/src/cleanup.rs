//! SQL for cleaning up attachments: the files a record being deleted
//! names (read before its rows go by cascade, so the bytes can be released
//! right after), and what the sweeper deletes: old unattached rows and the
//! object rows no attachment names.

use uuid::Uuid;

use crate::auth::Tenant;
use crate::db::{Db, Query, Tx};
use crate::error::StoreError;
use crate::time::Timestamp;

/// The SHA-256s of the files on ticket `ticket` and on its comments, in
/// the caller's transaction: read before the ticket is deleted (the rows
/// go with it), so their bytes can be released right after.
pub async fn hashes_of_ticket(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket: Uuid,
) -> Result<Vec<String>, StoreError> {
    Query::new(
        "SELECT DISTINCT a.sha256 FROM attachments a WHERE (a.ticket_id = $1 OR a.comment_id IN \
         (SELECT c.id FROM ticket_comments c WHERE c.ticket_id = $1)) AND a.company_id = $2 \
         AND a.mode = $3",
    )
    .bind(ticket)
    .bind_tenant(tenant)
    .fetch_column(tx)
    .await
}

/// The companies and SHA-256s of the files of chat `sessions`: on their
/// messages, and uploaded by their visitors. Read in the caller's
/// transaction before the sessions are deleted (the rows go with them), so
/// their bytes can be released right after.
pub async fn hashes_of_sessions(
    tx: &mut Tx,
    sessions: &[Uuid],
) -> Result<Vec<(Uuid, String)>, StoreError> {
    if sessions.is_empty() {
        return Ok(Vec::new());
    }
    Query::new("SELECT DISTINCT a.company_id, a.sha256 FROM attachments a WHERE a.session_id IN ")
        .push_bind_list(sessions.iter().copied())
        .push(" OR a.message_id IN (SELECT m.id FROM chat_messages m WHERE m.session_id IN ")
        .push_bind_list(sessions.iter().copied())
        .push(")")
        .fetch_all(tx)
        .await
}

/// Deletes up to `limit` uploads never attached and made before `cutoff`,
/// or, a visitor's, before `visitor_cutoff`; answers how many.
pub async fn delete_orphans(
    db: &Db,
    cutoff: Timestamp,
    visitor_cutoff: Timestamp,
    limit: i64,
) -> Result<u64, StoreError> {
    Query::new(
        "DELETE FROM attachments WHERE id IN (SELECT id FROM attachments \
         WHERE ticket_id IS NULL AND comment_id IS NULL AND message_id IS NULL \
         AND (created_at < $1 OR (session_id IS NOT NULL AND created_at < $2)) \
         ORDER BY created_at LIMIT $3)",
    )
    .bind(cutoff)
    .bind(visitor_cutoff)
    .bind(limit)
    .rows_affected(db)
    .await
}

/// Up to `limit` objects (company, SHA-256) no attachment names.
pub async fn unnamed_objects(db: &Db, limit: i64) -> Result<Vec<(Uuid, String)>, StoreError> {
    Query::new(
        "SELECT o.company_id, o.sha256 FROM attachment_objects o WHERE NOT EXISTS \
         (SELECT 1 FROM attachments a WHERE a.company_id = o.company_id \
         AND a.sha256 = o.sha256) LIMIT $1",
    )
    .bind(limit)
    .fetch_all(db)
    .await
}

/// Deletes the object row if still no attachment names it; the caller
/// removes the bytes before committing, so an upload of the same bytes
/// (which waits on this row) stores them again afterwards.
pub async fn drop_object(tx: &mut Tx, company: Uuid, sha256: &str) -> Result<bool, StoreError> {
    let dropped = Query::new(
        "DELETE FROM attachment_objects WHERE company_id = $1 AND sha256 = $2 AND NOT EXISTS \
         (SELECT 1 FROM attachments a WHERE a.company_id = $1 AND a.sha256 = $2)",
    )
    .bind(company)
    .bind(sha256)
    .rows_affected(tx)
    .await?;
    Ok(dropped > 0)
}
