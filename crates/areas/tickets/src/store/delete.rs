//! Deleting a ticket, with a change-feed delete for it and its comments.

use uuid::Uuid;

use crate::attachments::store as attachment_store;
use crate::audit::{Action, Changes, Target, TargetType};
use crate::auth::Tenant;
use crate::db::{Db, Query};
use crate::error::StoreError;
use crate::event_log::{RecordChange, RecordType};
use crate::time::Timestamp;

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
    let (number, subject): (String, String) = Query::new(
        "SELECT ticket_number, subject FROM tickets WHERE id = $1 AND company_id = $2 AND mode = $3",
    )
    .bind(id)
    .bind_tenant(tenant)
    .fetch_one(&mut tx)
    .await?;
    let hashes = attachment_store::hashes_of_ticket(&mut tx, tenant, id).await?;
    let comments: Vec<Uuid> = Query::new("SELECT c.id FROM ticket_comments c WHERE c.ticket_id = ")
        .push_bind(id)
        .push(" AND ")
        .push_tenant(tenant, "c")
        .push(" ORDER BY c.created_at, c.id")
        .fetch_column(&mut tx)
        .await?;
    Query::new("DELETE FROM tickets WHERE id = $1 AND company_id = $2 AND mode = $3")
        .bind(id)
        .bind_tenant(tenant)
        .push_teams(tenant, "team_id")
        .execute_or_not_found(&mut tx)
        .await?;
    for comment in comments {
        let change = RecordChange::delete(RecordType::Comment, comment);
        crate::event_log::record_change(&mut tx, tenant, &change, now).await?;
    }
    let change = RecordChange::delete(RecordType::Ticket, id);
    crate::event_log::record_change(&mut tx, tenant, &change, now).await?;
    let before = serde_json::json!({"ticketNumber": number, "subject": subject});
    let target = Target::new(TargetType::Ticket, id);
    let changes = Changes::none().with("before", before);
    let action = Action::TicketDeleted;
    crate::audit::record(&mut tx, tenant.company_id, now, action, target, changes).await?;
    tx.commit().await?;
    Ok(hashes)
}
