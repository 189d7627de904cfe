//! Each tenant's SLA policies and business-hours calendars, kept in memory
//! so that creating a ticket chooses its policy and computes its due times
//! without reading them. Every change of a company's policies or calendars
//! through the API forgets the company on this node at once and on every
//! other node over the bus (topic `sla`); a snapshot is also reloaded after
//! `RULES_TTL`, which bounds how long a node that missed a message (Redis
//! unreachable) keeps old rules.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dashmap::DashMap;
use uuid::Uuid;

use super::calendar::Hours;
use super::clocks::Terms;
use super::model::Policy;
use crate::auth::Tenant;
use crate::db::Db;
use crate::error::StoreError;
use crate::generation::Generation;
use crate::state::AppState;
use crate::tickets::model::Priority;

/// The bus topic of SLA rule changes; the payload is the company id.
pub const TOPIC: &str = "sla";

/// How long a snapshot is used without reading the rules again.
pub const RULES_TTL: Duration = Duration::from_secs(10);

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

struct Cached {
    rules: Arc<Rules>,
    fetched: Instant,
}

#[derive(Default)]
pub struct SlaCache {
    entries: DashMap<Tenant, Cached>,
    /// Bumped by every invalidation: rules read before one must not be
    /// stored (they may predate the change).
    generation: Generation,
}

impl SlaCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// The tenant's rules if this node holds a fresh snapshot.
    pub fn get(&self, tenant: &Tenant) -> Option<Arc<Rules>> {
        let entry = self.entries.get(tenant)?;
        (entry.fetched.elapsed() < RULES_TTL).then(|| Arc::clone(&entry.rules))
    }

    /// Call before reading the rules; pass the value to `insert`.
    pub fn generation(&self) -> u64 {
        self.generation.current()
    }

    /// Stores rules read from the database, unless an invalidation has
    /// happened since `generation` was taken.
    pub fn insert(&self, tenant: Tenant, rules: Arc<Rules>, generation: u64) {
        let cached = Cached {
            rules,
            fetched: Instant::now(),
        };
        self.generation
            .insert_if_current(generation, &self.entries, tenant, cached);
    }

    /// Forgets the company's rules (both modes) on this node.
    pub fn forget(&self, company_id: Uuid) {
        self.generation.bump();
        self.entries
            .retain(|tenant, _| tenant.company_id != company_id);
    }

    /// Forgets every company's rules on this node.
    pub fn clear(&self) {
        self.generation.bump();
        self.entries.clear();
    }
}

/// The tenant's rules: this node's snapshot, or read from `db` and kept.
pub async fn rules(cache: &SlaCache, db: &Db, tenant: &Tenant) -> Result<Arc<Rules>, StoreError> {
    if let Some(rules) = cache.get(tenant) {
        return Ok(rules);
    }
    let generation = cache.generation();
    let rules = Arc::new(super::store::rules(db, tenant).await?);
    cache.insert(*tenant, Arc::clone(&rules), generation);
    Ok(rules)
}

/// The company's policies or calendars changed: forgets them here at once
/// and on every other node through the bus. Call after the change has
/// committed.
pub async fn changed(state: &AppState, company_id: Uuid) {
    state.sla.forget(company_id);
    state
        .realtime
        .bus
        .publish(TOPIC, company_id.to_string())
        .await;
}

/// Applies the changes other nodes publish, until shutdown. The
/// subscription is taken before this returns, so nothing published after
/// `App::build` is missed.
pub fn spawn_invalidation_listener(state: &AppState) -> tokio::task::JoinHandle<()> {
    let on_message = state.sla.clone();
    let on_missed = state.sla.clone();
    state.realtime.bus.listen(
        TOPIC,
        state.shutdown.clone(),
        move |payload| match Uuid::parse_str(payload) {
            Ok(company_id) => on_message.forget(company_id),
            Err(_) => tracing::warn!(%payload, "unknown SLA invalidation"),
        },
        // Missed messages may have been changes.
        move || on_missed.clear(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Mode;

    fn tenant() -> Tenant {
        Tenant {
            company_id: Uuid::now_v7(),
            mode: Mode::Test,
        }
    }

    #[test]
    fn forgetting_a_company_drops_both_modes_only() {
        let cache = SlaCache::new();
        let acme = tenant();
        let acme_live = Tenant {
            mode: Mode::Live,
            ..acme
        };
        let other = tenant();
        for t in [acme, acme_live, other] {
            cache.insert(t, Arc::default(), cache.generation());
        }
        cache.forget(acme.company_id);
        assert!(cache.get(&acme).is_none());
        assert!(cache.get(&acme_live).is_none());
        assert!(cache.get(&other).is_some());
    }

    #[test]
    fn rules_read_before_an_invalidation_are_not_kept() {
        let cache = SlaCache::new();
        let before = cache.generation();
        cache.forget(Uuid::now_v7());
        cache.insert(tenant(), Arc::default(), before);
        assert!(cache.entries.is_empty());
    }
}
