//! Typed custom fields on tickets and chat sessions: the company's
//! definitions, the validation of values against them and the list filters
//! (`model`, pure), and their SQL (`store`). The record areas call the store
//! inside their own transactions, so a value change commits with the
//! record's timeline and events. An area crate: it depends on the floors
//! below and the audit log (a definition's change writes its entry).

pub mod model;
pub mod store;

use std::sync::Arc;

use crate::db::Db;
use infra::snapshots::TenantSnapshots;
use model::Definition;
use vocab::error::StoreError;
use vocab::tenant::Tenant;

/// The bus topic of definition changes; the payload is the company id.
pub const TOPIC: &str = "custom_fields";

/// Each tenant's definitions on this node (`infra::snapshots`): a ticket's
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

// The floors below, at the paths the service names them by.
infra::area_floors!();

// The areas this one builds on.
pub(crate) use ::audit;
