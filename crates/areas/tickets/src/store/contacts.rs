//! Tickets and the contacts they are from: the step a create takes to
//! learn its contact (declared here, given by the service, which asks the
//! contacts area), a contact's tickets, and moving them on a merge.

use futures::future::BoxFuture;
use serde::Serialize;
use uuid::Uuid;
use vocab::visitor::Person;

use crate::auth::Tenant;
use crate::db::{Db, Query, Tx};
use crate::error::StoreError;
use crate::model::{Priority, TicketStatus};
use crate::time::Timestamp;

/// The contact a new ticket is from, found or created in the ticket's
/// transaction (none: nobody to match).
pub trait ContactOf: Sync {
    fn contact<'a>(
        &'a self,
        tx: &'a mut Tx,
        person: &'a Person,
    ) -> BoxFuture<'a, Result<Option<Uuid>, StoreError>>;
}

/// A ticket as a contact's or an organisation's page lists it.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TicketSummary {
    pub id: Uuid,
    pub ticket_number: String,
    pub subject: String,
    #[schema(schema_with = crate::openapi::schema::ticket_status)]
    pub status: TicketStatus,
    #[schema(schema_with = crate::openapi::schema::ticket_priority)]
    pub priority: Priority,
    pub contact_id: Option<Uuid>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// The newest `limit` tickets of `contacts` the tenant may see (its team
/// limit applies), newest first.
pub async fn of_contacts(
    db: &Db,
    tenant: &Tenant,
    contacts: &[Uuid],
    limit: i64,
) -> Result<Vec<TicketSummary>, StoreError> {
    if contacts.is_empty() {
        return Ok(Vec::new());
    }
    Query::new(
        "SELECT t.id, t.ticket_number, t.subject, t.status, t.priority, t.contact_id, \
         t.created_at, t.updated_at FROM tickets t WHERE t.contact_id IN ",
    )
    .push_bind_list(contacts.iter().copied())
    .push(" AND ")
    .push_tenant_in_teams(tenant, "t", "team_id")
    .push(" ORDER BY t.created_at DESC, t.id DESC LIMIT ")
    .push_bind(limit)
    .fetch_all(db)
    .await
}

/// Gives the tenant's tickets of contact `from` to contact `to` (whatever
/// team they are in: a merge moves every one); how many moved.
pub async fn move_contact(
    tx: &mut Tx,
    tenant: &Tenant,
    from: Uuid,
    to: Uuid,
) -> Result<usize, StoreError> {
    let moved: Vec<Uuid> = Query::new(
        "UPDATE tickets SET contact_id = $1 WHERE contact_id = $2 AND company_id = $3 \
         AND mode = $4 RETURNING id",
    )
    .bind(to)
    .bind(from)
    .bind_tenant(tenant)
    .fetch_column(tx)
    .await?;
    Ok(moved.len())
}
