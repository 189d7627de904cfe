//! SQL of the realtime area: the server secret from which socket and visitor
//! tokens are signed (created once, by whichever node asks first, and read
//! by every node, so a token signed on one node verifies on all), and the
//! events table as the ticket channels read it.

use serde_json::Value;
use sqlx::types::Json;
use uuid::Uuid;

use crate::actor::Actor;
use crate::auth::Tenant;
use crate::db::{Db, Query};
use crate::error::StoreError;
use crate::time::Timestamp;

pub use infra::server_secret::server_secret;

/// One recorded event as the ticket channels replay it.
#[derive(Debug, sqlx::FromRow)]
pub struct EventRow {
    pub id: Uuid,
    pub name: String,
    pub data: Json<Value>,
    pub created_at: Timestamp,
    /// Null for an event recorded before events named their actor.
    pub actor: Option<Json<Actor>>,
}

/// The entity of ticket `id` (NotFound once it is deleted).
pub async fn ticket_entity(db: &Db, tenant: &Tenant, id: Uuid) -> Result<Uuid, StoreError> {
    Query::new("SELECT t.entity_id FROM tickets t WHERE t.id = ")
        .push_bind(id)
        .push(" AND ")
        .push_tenant(tenant, "t")
        .fetch_scalar(db)
        .await
}

/// Up to `limit` of the tenant's events named in `names` recorded after
/// event `since` (NotFound unless `since` is one of them), oldest first.
pub async fn events_after(
    db: &Db,
    tenant: &Tenant,
    names: &[&str],
    since: Uuid,
    limit: i64,
) -> Result<Vec<EventRow>, StoreError> {
    let named = |query: Query| {
        query
            .push(" AND ")
            .push_tenant(tenant, "e")
            .push(" AND e.name IN ")
            .push_bind_list(names.iter().copied())
    };
    let anchor: Timestamp =
        named(Query::new("SELECT e.created_at FROM events e WHERE e.id = ").push_bind(since))
            .fetch_scalar(db)
            .await?;
    let mut page = named(Query::new(
        "SELECT e.id, e.name, e.data, e.created_at, e.actor FROM events e WHERE 1 = 1",
    ));
    let after = page.placeholder_for(anchor);
    let since = page.placeholder_for(since);
    page.push(&format!(
        " AND (e.created_at > {after} OR (e.created_at = {after} AND e.id > {since})) \
         ORDER BY e.created_at, e.id LIMIT "
    ))
    .push_bind(limit)
    .fetch_all(db)
    .await
}
