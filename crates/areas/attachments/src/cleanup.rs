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

/// The files a person sent, for their erasure: those uploaded with
/// `tickets` (not on a comment), on `comments`, on `messages`, and
/// uploaded by the visitors of `sessions`. Deletes their rows in `tx` and
/// answers their SHA-256s, so the caller releases the bytes after it
/// commits.
pub async fn erase_sent(
    tx: &mut Tx,
    tenant: &Tenant,
    sent: &Sent<'_>,
) -> Result<Vec<String>, StoreError> {
    let mut hashes: Vec<String> = Vec::new();
    for (condition, ids) in [
        ("a.comment_id IS NULL AND a.ticket_id IN ", sent.tickets),
        ("a.comment_id IN ", sent.comments),
        ("a.message_id IN ", sent.messages),
        ("a.session_id IN ", sent.sessions),
    ] {
        if ids.is_empty() {
            continue;
        }
        let found: Vec<(Uuid, String)> =
            Query::new("SELECT a.id, a.sha256 FROM attachments a WHERE ")
                .push_tenant(tenant, "a")
                .push(" AND ")
                .push(condition)
                .push_bind_list(ids.iter().copied())
                .fetch_all(&mut *tx)
                .await?;
        if found.is_empty() {
            continue;
        }
        Query::new("DELETE FROM attachments WHERE id IN ")
            .push_bind_list(found.iter().map(|(id, _)| *id))
            .execute(&mut *tx)
            .await?;
        hashes.extend(found.into_iter().map(|(_, sha256)| sha256));
    }
    hashes.sort();
    hashes.dedup();
    Ok(hashes)
}

/// What a person sent, by the records it came with.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sent<'a> {
    pub tickets: &'a [Uuid],
    pub comments: &'a [Uuid],
    pub messages: &'a [Uuid],
    pub sessions: &'a [Uuid],
}

/// One stored file as a person's export lists it.
#[derive(Debug, Clone, serde::Serialize, sqlx::FromRow)]
#[serde(rename_all = "camelCase")]
pub struct FileRow {
    pub id: Uuid,
    pub filename: String,
    pub content_type: String,
    pub size: i64,
    pub sha256: String,
    pub ticket_id: Option<Uuid>,
    pub comment_id: Option<Uuid>,
    pub message_id: Option<Uuid>,
    pub session_id: Option<Uuid>,
    pub created_at: Timestamp,
}

/// The tenant's files on `tickets`, `comments`, `messages` or uploaded in
/// `sessions` (a person's export), oldest first.
pub async fn files_of(
    db: &Db,
    tenant: &Tenant,
    sent: &Sent<'_>,
) -> Result<Vec<FileRow>, StoreError> {
    let mut files: Vec<FileRow> = Vec::new();
    for (condition, ids) in [
        ("a.ticket_id IN ", sent.tickets),
        ("a.comment_id IN ", sent.comments),
        ("a.message_id IN ", sent.messages),
        ("a.session_id IN ", sent.sessions),
    ] {
        if ids.is_empty() {
            continue;
        }
        let rows: Vec<FileRow> = Query::new(
            "SELECT a.id, a.filename, a.content_type, a.size, a.sha256, a.ticket_id, \
             a.comment_id, a.message_id, a.session_id, a.created_at FROM attachments a WHERE ",
        )
        .push_tenant(tenant, "a")
        .push(" AND ")
        .push(condition)
        .push_bind_list(ids.iter().copied())
        .fetch_all(db)
        .await?;
        files.extend(rows);
    }
    files.sort_by_key(|file| (file.created_at, file.id));
    files.dedup_by_key(|file| file.id);
    Ok(files)
}
