//! Deleting a ticket, with a change-feed delete for it and its comments
//! and its `ticket.deleted` audit entry: one ticket a request names, or a
//! batch of them in one transaction (the retention pass).

use uuid::Uuid;

use crate::attachments::store as attachment_store;
use crate::audit::{Action, Changes, Target, TargetType};
use crate::auth::Tenant;
use crate::db::{Db, Query, Tx};
use crate::error::StoreError;
use crate::event_log::{RecordChange, RecordType};
use crate::time::Timestamp;

/// Why a ticket is deleted: a request's, or the company's data retention
/// (its audit entry then says so, `changes.reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deletion {
    Requested,
    Retention,
}

impl Deletion {
    /// The audit entry's `changes.reason`, if any.
    fn reason(self) -> Option<&'static str> {
        match self {
            Deletion::Requested => None,
            Deletion::Retention => Some("retention"),
        }
    }
}

/// What a batch deleted: how many tickets, and the SHA-256s of the files
/// they had.
#[derive(Debug, Default)]
pub struct Deleted {
    pub tickets: u64,
    pub files: Vec<String>,
}

/// Deletes a ticket with its comments, timeline and attachment rows. The
/// change feed gets a delete for each comment (the database deletes them
/// with the ticket) and then for the ticket, so a mirror ends without
/// either. Answers the SHA-256s of the files it had, for the caller to
/// release the bytes no other record uses.
pub async fn delete(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    now: Timestamp,
) -> Result<Vec<String>, StoreError> {
    let mut tx = db.begin().await?;
    let files = delete_in(&mut tx, tenant, id, Deletion::Requested, now).await?;
    tx.commit().await?;
    Ok(files)
}

/// Deletes `tickets`, each as `delete` does (its own change-feed deletes
/// and audit entry, `why` in it), in one transaction: a pass that deletes
/// many commits once per batch, not once per ticket. A ticket already
/// gone (deleted since the caller read it) is passed over.
pub async fn delete_batch(
    db: &Db,
    tickets: &[(Tenant, Uuid)],
    why: Deletion,
    now: Timestamp,
) -> Result<Deleted, StoreError> {
    let mut deleted = Deleted::default();
    if tickets.is_empty() {
        return Ok(deleted);
    }
    let mut tx = db.begin().await?;
    for (tenant, id) in tickets {
        match delete_in(&mut tx, tenant, *id, why, now).await {
            Ok(files) => {
                deleted.tickets += 1;
                deleted.files.extend(files);
            }
            Err(StoreError::NotFound) => {}
            Err(err) => return Err(err),
        }
    }
    tx.commit().await?;
    Ok(deleted)
}

/// One ticket's delete, in `tx`; NotFound before anything is written when
/// the tenant has no such ticket.
async fn delete_in(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    why: Deletion,
    now: Timestamp,
) -> Result<Vec<String>, StoreError> {
    let (number, subject): (String, String) = Query::new(
        "SELECT ticket_number, subject FROM tickets WHERE id = $1 AND company_id = $2 AND mode = $3",
    )
    .bind(id)
    .bind_tenant(tenant)
    .fetch_one(&mut *tx)
    .await?;
    let hashes = attachment_store::hashes_of_ticket(&mut *tx, tenant, id).await?;
    let comments: Vec<Uuid> = Query::new("SELECT c.id FROM ticket_comments c WHERE c.ticket_id = ")
        .push_bind(id)
        .push(" AND ")
        .push_tenant(tenant, "c")
        .push(" ORDER BY c.created_at, c.id")
        .fetch_column(&mut *tx)
        .await?;
    Query::new("DELETE FROM tickets WHERE id = $1 AND company_id = $2 AND mode = $3")
        .bind(id)
        .bind_tenant(tenant)
        .push_teams(tenant, "team_id")
        .execute_or_not_found(&mut *tx)
        .await?;
    for comment in comments {
        let change = RecordChange::delete(RecordType::Comment, comment);
        crate::event_log::record_change(&mut *tx, tenant, &change, now).await?;
    }
    let change = RecordChange::delete(RecordType::Ticket, id);
    crate::event_log::record_change(&mut *tx, tenant, &change, now).await?;
    let before = serde_json::json!({"ticketNumber": number, "subject": subject});
    let target = Target::new(TargetType::Ticket, id);
    let mut changes = Changes::none().with("before", before);
    if let Some(reason) = why.reason() {
        changes = changes.with("reason", reason.into());
    }
    let action = Action::TicketDeleted;
    crate::audit::record(&mut *tx, tenant.company_id, now, action, target, changes).await?;
    Ok(hashes)
}
