//! Each tenant's SLA policies and business-hours calendars, kept in memory
//! (`crate::snapshots`) so that creating a ticket chooses its policy and
//! computes its due times without reading them. Every change of a
//! company's policies or calendars through the API forgets the company on
//! every node (bus topic `sla`).

use std::collections::HashMap;
use std::sync::Arc;

use uuid::Uuid;

use super::calendar::Hours;
use super::clocks::Terms;
use super::model::Policy;
use crate::auth::Tenant;
use crate::db::Db;
use crate::error::StoreError;
use crate::snapshots::TenantSnapshots;
use vocab::ticket::Priority;

/// The bus topic of SLA rule changes; the payload is the company id.
pub const TOPIC: &str = "sla";

/// The tenants' rules on this node.
pub type SlaCache = TenantSnapshots<Rules>;

/// An empty cache, listening for nothing until
/// `snapshots::spawn_invalidation_listener`.
pub fn new_cache() -> SlaCache {
    TenantSnapshots::new(TOPIC)
}

/// A tenant's policies (in evaluation order, disabled ones included) and
/// the calendars they count in.
#[derive(Debug, Default)]
pub struct Rules {
    pub policies: Vec<Policy>,
    /// `None` for a stored calendar that no longer parses (a time zone the
    /// tz database dropped): its policies give no terms.
    pub calendars: HashMap<Uuid, Option<Hours>>,
}

impl Rules {
    /// Whether any policy can apply to a new ticket.
    pub fn any_enabled(&self) -> bool {
        self.policies.iter().any(|p| p.enabled)
    }

    /// The terms `policy` gives a ticket of `priority`; `None` when it sets
    /// no targets for that priority or its calendar cannot be used.
    pub fn terms(&self, policy: &Policy, priority: Priority) -> Option<Terms> {
        let targets = policy.targets.get(priority)?;
        let hours = match policy.business_hours_id {
            Some(id) => self.calendars.get(&id)?.clone()?,
            None => Hours::Always,
        };
        Some(Terms::new(policy, hours, targets.clone()))
    }
}

/// The tenant's rules: this node's snapshot, or read from `db` and kept.
pub async fn rules(cache: &SlaCache, db: &Db, tenant: &Tenant) -> Result<Arc<Rules>, StoreError> {
    cache
        .get_or_read(tenant, super::store::rules(db, tenant))
        .await
}
