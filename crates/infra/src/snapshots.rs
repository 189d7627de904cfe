//! Each tenant's rarely changed settings (SLA rules, custom field
//! definitions) kept in memory, so that the requests that consult them on
//! every call (a ticket's create) do not read them each time. Every change
//! through the API forgets the company on this node at once and on every
//! other node over the bus (one topic per kind of settings); a snapshot is
//! also reloaded after `SNAPSHOT_TTL`, which bounds how long a node that
//! missed a message (Redis unreachable) keeps old settings.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dashmap::DashMap;
use uuid::Uuid;

use crate::auth::Tenant;
use crate::bus::Bus;
use crate::error::StoreError;
use crate::generation::Generation;

/// How long a snapshot is used without reading the settings again.
pub const SNAPSHOT_TTL: Duration = Duration::from_secs(10);

struct Cached<T> {
    value: Arc<T>,
    fetched: Instant,
}

/// One kind of settings, per tenant, and the bus topic its changes are
/// announced on (the payload is the company id).
pub struct TenantSnapshots<T> {
    topic: &'static str,
    entries: DashMap<Tenant, Cached<T>>,
    /// Bumped by every invalidation: settings read before one must not be
    /// stored (they may predate the change).
    generation: Generation,
}

impl<T: Send + Sync + 'static> TenantSnapshots<T> {
    pub fn new(topic: &'static str) -> Self {
        TenantSnapshots {
            topic,
            entries: DashMap::new(),
            generation: Generation::default(),
        }
    }

    /// The tenant's settings if this node holds a fresh snapshot.
    pub fn get(&self, tenant: &Tenant) -> Option<Arc<T>> {
        let entry = self.entries.get(tenant)?;
        (entry.fetched.elapsed() < SNAPSHOT_TTL).then(|| Arc::clone(&entry.value))
    }

    /// The tenant's settings: this node's snapshot, or `read` and kept.
    pub async fn get_or_read<F>(&self, tenant: &Tenant, read: F) -> Result<Arc<T>, StoreError>
    where
        F: Future<Output = Result<T, StoreError>>,
    {
        if let Some(value) = self.get(tenant) {
            return Ok(value);
        }
        let generation = self.generation();
        let value = Arc::new(read.await?);
        self.insert(*tenant, Arc::clone(&value), generation);
        Ok(value)
    }

    /// Call before reading the settings; pass the value to `insert`.
    pub fn generation(&self) -> u64 {
        self.generation.current()
    }

    /// Stores settings read from the database, unless an invalidation has
    /// happened since `generation` was taken.
    pub fn insert(&self, tenant: Tenant, value: Arc<T>, generation: u64) {
        let cached = Cached {
            value,
            fetched: Instant::now(),
        };
        self.generation
            .insert_if_current(generation, &self.entries, tenant, cached);
    }

    /// Forgets the company's settings (both modes) on this node.
    pub fn forget(&self, company_id: Uuid) {
        self.generation.bump();
        self.entries
            .retain(|tenant, _| tenant.company_id != company_id);
    }

    /// Forgets every company's settings on this node.
    pub fn clear(&self) {
        self.generation.bump();
        self.entries.clear();
    }

    /// The company's settings changed: forgets them here at once and on
    /// every other node through the bus. Call after the change has
    /// committed.
    pub async fn changed(&self, bus: &Bus, company_id: Uuid) {
        self.forget(company_id);
        bus.publish(self.topic, company_id.to_string()).await;
    }
}

/// Applies the changes other nodes publish on `snapshots`' topic, until
/// shutdown. The subscription is taken before this returns, so nothing
/// published after `App::build` is missed.
pub fn spawn_invalidation_listener<T: Send + Sync + 'static>(
    bus: &Bus,
    shutdown: tokio::sync::watch::Receiver<bool>,
    snapshots: &Arc<TenantSnapshots<T>>,
) -> tokio::task::JoinHandle<()> {
    let on_message = Arc::clone(snapshots);
    let on_missed = Arc::clone(snapshots);
    let topic = snapshots.topic;
    bus.listen(
        topic,
        shutdown,
        move |payload| match Uuid::parse_str(payload) {
            Ok(company_id) => on_message.forget(company_id),
            Err(_) => tracing::warn!(%payload, topic, "unknown invalidation"),
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
        Tenant::new(uuid::Uuid::now_v7(), Mode::Test)
    }

    #[test]
    fn forgetting_a_company_drops_both_modes_only() {
        let snapshots = TenantSnapshots::<u8>::new("test");
        let acme = tenant();
        let acme_live = Tenant {
            mode: Mode::Live,
            ..acme
        };
        let other = tenant();
        for t in [acme, acme_live, other] {
            snapshots.insert(t, Arc::default(), snapshots.generation());
        }
        snapshots.forget(acme.company_id);
        assert!(snapshots.get(&acme).is_none());
        assert!(snapshots.get(&acme_live).is_none());
        assert!(snapshots.get(&other).is_some());
    }

    #[test]
    fn settings_read_before_an_invalidation_are_not_kept() {
        let snapshots = TenantSnapshots::<u8>::new("test");
        let before = snapshots.generation();
        snapshots.forget(Uuid::now_v7());
        snapshots.insert(tenant(), Arc::default(), before);
        assert!(snapshots.entries.is_empty());
    }

    #[tokio::test]
    async fn a_snapshot_is_read_once_until_forgotten() {
        let snapshots = TenantSnapshots::<u8>::new("test");
        let acme = tenant();
        let first = snapshots.get_or_read(&acme, async { Ok(1) }).await;
        let kept = snapshots.get_or_read(&acme, async { Ok(2) }).await;
        snapshots.forget(acme.company_id);
        let reread = snapshots.get_or_read(&acme, async { Ok(3) }).await;
        assert_eq!([first, kept, reread].map(|v| *v.expect("read")), [1, 1, 3]);
    }
}
