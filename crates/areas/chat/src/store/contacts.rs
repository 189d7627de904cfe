//! Chat sessions and the contacts they are from: the step a create takes
//! to learn its contact (declared here, given by the service, which asks
//! the contacts area), a contact's chats, and moving them on a merge.

use futures::future::BoxFuture;
use serde::Serialize;
use uuid::Uuid;
use vocab::visitor::Person;

use crate::auth::Tenant;
use crate::db::{Db, Query, Tx};
use crate::error::StoreError;
use crate::model::{SessionStatus, session_status};
use crate::time::Timestamp;

/// The contact a new chat session is from, found or created in the
/// session's transaction (none: nobody to match).
pub trait ContactOf: Sync {
    fn contact<'a>(
        &'a self,
        tx: &'a mut Tx,
        person: &'a Person,
    ) -> BoxFuture<'a, Result<Option<Uuid>, StoreError>>;
}

/// A chat session as a contact's page lists it.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    pub id: Uuid,
    #[schema(schema_with = session_status)]
    pub status: SessionStatus,
    pub visitor_name: String,
    pub contact_id: Option<Uuid>,
    pub created_at: Timestamp,
    pub closed_at: Option<Timestamp>,
}

/// The newest `limit` chat sessions of `contacts` the tenant may see (its
/// team limit applies), newest first.
pub async fn of_contacts(
    db: &Db,
    tenant: &Tenant,
    contacts: &[Uuid],
    limit: i64,
) -> Result<Vec<SessionSummary>, StoreError> {
    if contacts.is_empty() {
        return Ok(Vec::new());
    }
    Query::new(
        "SELECT id, status, visitor_name, contact_id, created_at, closed_at FROM chat_sessions \
         WHERE contact_id IN ",
    )
    .push_bind_list(contacts.iter().copied())
    .push(" AND ")
    .push_tenant(tenant, "")
    .push_teams(tenant, "team_id")
    .push(" ORDER BY created_at DESC, id DESC LIMIT ")
    .push_bind(limit)
    .fetch_all(db)
    .await
}

/// Gives the tenant's chat sessions of contact `from` to contact `to`
/// (whatever team they are in: a merge moves every one); how many moved.
pub async fn move_contact(
    tx: &mut Tx,
    tenant: &Tenant,
    from: Uuid,
    to: Uuid,
) -> Result<usize, StoreError> {
    let moved: Vec<Uuid> = Query::new(
        "UPDATE chat_sessions SET contact_id = $1 WHERE contact_id = $2 AND company_id = $3 \
         AND mode = $4 RETURNING id",
    )
    .bind(to)
    .bind(from)
    .bind_tenant(tenant)
    .fetch_column(tx)
    .await?;
    Ok(moved.len())
}
