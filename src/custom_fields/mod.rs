//! Typed custom fields on tickets and chat sessions: the company's
//! definitions (`/settings/custom-fields`), the validation of values against
//! them and the list filters (`model`, pure), and their SQL (`store`). The
//! record areas call the store inside their own transactions, so a value
//! change commits with the record's timeline and events.

pub mod model;
pub mod routes;
pub mod store;

use std::sync::Arc;

use crate::auth::Tenant;
use crate::db::Db;
use crate::error::StoreError;
use crate::snapshots::TenantSnapshots;
use model::Definition;

/// The bus topic of definition changes; the payload is the company id.
pub const TOPIC: &str = "custom_fields";

/// Each tenant's definitions on this node (`crate::snapshots`): a ticket's
/// or chat's create validates its values without reading them.
pub type DefinitionCache = TenantSnapshots<Vec<Definition>>;

pub fn new_definition_cache() -> DefinitionCache {
    TenantSnapshots::new(TOPIC)
}

/// The tenant's definitions, sorted by key: this node's snapshot, or read
/// and kept.
pub async fn definitions(
    cache: &DefinitionCache,
    db: &Db,
    tenant: &Tenant,
) -> Result<Arc<Vec<Definition>>, StoreError> {
    cache.get_or_read(tenant, store::list(db, tenant)).await
}
