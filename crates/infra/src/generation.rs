//! The guard of the caches a bus invalidation must beat (API keys, SLA
//! rules): a reader notes the generation before it reads the database and
//! stores what it read only if no invalidation happened meanwhile, so a
//! value read before a change is never kept after it.

use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{AtomicU64, Ordering};

use dashmap::DashMap;

#[derive(Debug, Default)]
pub struct Generation(AtomicU64);

impl Generation {
    /// Call before reading the database; pass the value to
    /// [`Generation::insert_if_current`].
    pub fn current(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    /// Every invalidation calls this before it removes entries.
    pub fn bump(&self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }

    /// Inserts `value` unless an invalidation has happened since `seen` was
    /// taken. An invalidation that races with the insert wins: the entry is
    /// removed again if the generation moved while it was written.
    pub fn insert_if_current<K: Eq + Hash + Clone, V, S: BuildHasher + Clone>(
        &self,
        seen: u64,
        entries: &DashMap<K, V, S>,
        key: K,
        value: V,
    ) {
        if self.current() != seen {
            return;
        }
        entries.insert(key.clone(), value);
        if self.current() != seen {
            entries.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_read_before_an_invalidation_is_not_stored() {
        let generation = Generation::default();
        let entries = DashMap::new();
        let seen = generation.current();
        generation.bump();
        generation.insert_if_current(seen, &entries, 1, "stale");
        assert!(entries.is_empty());
    }

    #[test]
    fn a_value_read_in_the_current_generation_is_stored() {
        let generation = Generation::default();
        let entries = DashMap::new();
        generation.insert_if_current(generation.current(), &entries, 1, "fresh");
        assert_eq!(entries.get(&1).map(|v| *v), Some("fresh"));
    }
}
