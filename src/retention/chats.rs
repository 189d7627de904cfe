//! Chats past their retention (`SUPPORTDESK_CHAT_RETENTION_DAYS`; off by
//! default): a chat session closed before the cutoff is deleted with what
//! names it (its messages, tags, custom field values and rating go by
//! cascade; a ticket made from it keeps existing without the link, which
//! the change feed then records), with a change feed delete for each
//! message and for the session, and with
//! its files: the attachment rows of its messages and its visitor's
//! uploads in the same transaction, their stored bytes right after, unless
//! another upload of the company names the same bytes (as for a deleted
//! ticket). Bytes whose removal fails are left to the attachment sweep.

use std::collections::HashMap;

use uuid::Uuid;

use super::TableReport;
use super::store;
use crate::attachments::Attachments;
use crate::audit::{self, Action, Changes, Target, TargetType};
use crate::auth::Tenant;
use crate::db::{Db, Tx};
use crate::error::StoreError;
use crate::time::Timestamp;

/// Most sessions one transaction deletes: each takes its messages and
/// their rows along, so fewer than the pass's other batches.
pub const CHAT_BATCH: u64 = 100;

/// Deletes the chat sessions closed before `cutoff` (of `company` only,
/// when given), batch after batch, each with its change feed entries (its
/// messages' deletes, its own, then those of the tickets made from it) and
/// its audit entry (made by the service, stamped `now`) in the batch's
/// transaction.
pub async fn purge(
    db: &Db,
    attachments: &Attachments,
    company: Option<Uuid>,
    cutoff: Timestamp,
    now: Timestamp,
) -> Result<TableReport, StoreError> {
    let limit = i64::try_from(CHAT_BATCH).unwrap_or(i64::MAX);
    let mut report = TableReport {
        table: "chat_sessions",
        ..TableReport::default()
    };
    loop {
        let mut tx = db.begin().await?;
        let closed = store::closed_sessions(&mut tx, company, cutoff, limit).await?;
        let sessions: Vec<Uuid> = closed.iter().map(|(_, id)| *id).collect();
        let files = crate::attachments::store::hashes_of_sessions(&mut tx, &sessions).await?;
        let unlinked = store::tickets_of_sessions(&mut tx, &sessions).await?;
        let deleted = crate::chat::store::delete_sessions(&mut tx, &closed, now).await?;
        record_unlinked(&mut tx, attachments, &unlinked, now).await?;
        for (tenant, id) in &closed {
            let target = Target::new(TargetType::ChatSession, *id);
            let changes = Changes::none().with("reason", "retention".into());
            let company = tenant.company_id;
            audit::record(&mut tx, company, now, Action::ChatDeleted, target, changes).await?;
        }
        tx.commit().await?;
        let mut by_company: HashMap<Uuid, Vec<String>> = HashMap::new();
        for (company, sha256) in files {
            by_company.entry(company).or_default().push(sha256);
        }
        let storage = &attachments.storage;
        for (company, hashes) in &by_company {
            crate::attachments::sweep::release(db, storage, *company, hashes).await;
        }
        if deleted > 0 {
            report.rows_deleted += deleted;
            report.batches += 1;
            report.largest_batch = report.largest_batch.max(deleted);
        }
        if (sessions.len() as u64) < CHAT_BATCH {
            return Ok(report);
        }
    }
}

/// Records for the change feed, in `tx` at `now`, the tickets made from
/// chats just deleted: the database dropped their `chatSessionId`, which a
/// client mirroring the desk would otherwise keep.
async fn record_unlinked(
    tx: &mut Tx,
    attachments: &Attachments,
    tickets: &[(Tenant, Uuid)],
    now: Timestamp,
) -> Result<(), StoreError> {
    let signer = attachments.signer(now);
    for (tenant, id) in tickets {
        // A ticket deleted since it was read has nothing left to record.
        let ticket = match crate::tickets::store::load(&mut *tx, tenant, *id, &signer).await {
            Ok(ticket) => ticket,
            Err(StoreError::NotFound) => continue,
            Err(err) => return Err(err),
        };
        let change = crate::tickets::events::ticket_change(&ticket)?;
        crate::events::record_change(&mut *tx, tenant, &change, now).await?;
    }
    Ok(())
}
