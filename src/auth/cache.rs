//! The key cache: what authentication learnt about a key hash (or, for
//! socket tokens, a key id), kept for at most `KEY_CACHE_TTL`, so a request
//! needs no database read. Revoking, deactivating or changing a key through
//! the API (and suspending a company) publishes an invalidation on the bus
//! topic `auth`, which every node applies at once; so does the CLI when it
//! is given the nodes' Redis. Changes made otherwise (the CLI without
//! Redis) take effect within the TTL.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use dashmap::DashMap;
use tokio::sync::broadcast::error::RecvError;
use uuid::Uuid;

use crate::keys::store::KeyForAuth;
use crate::state::AppState;
use std::sync::Arc;

/// How long a cached key may be used without a database read.
pub const KEY_CACHE_TTL: Duration = Duration::from_secs(10);

/// The bus topic of cache invalidations.
pub const TOPIC: &str = "auth";

/// Entries are swept when the cache grows past this.
const SWEEP_ABOVE: usize = 10_000;

/// What to forget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invalidation {
    Key(Uuid),
    Company(Uuid),
    All,
}

impl Invalidation {
    /// Wire form on the bus: `key:<id>`, `company:<id>` or `all`.
    pub fn encode(&self) -> String {
        match self {
            Invalidation::Key(id) => format!("key:{id}"),
            Invalidation::Company(id) => format!("company:{id}"),
            Invalidation::All => "all".to_string(),
        }
    }

    pub fn decode(text: &str) -> Option<Invalidation> {
        if text == "all" {
            return Some(Invalidation::All);
        }
        let (kind, id) = text.split_once(':')?;
        let id = Uuid::parse_str(id).ok()?;
        match kind {
            "key" => Some(Invalidation::Key(id)),
            "company" => Some(Invalidation::Company(id)),
            _ => None,
        }
    }
}

struct Cached {
    /// Shared so a cache hit (every authenticated request) costs one atomic
    /// increment rather than a copy of the record's strings.
    record: Arc<KeyForAuth>,
    fetched: Instant,
}

#[derive(Default)]
pub struct KeyCache {
    /// By the SHA-256 of the key.
    entries: DashMap<String, Cached>,
    /// Bumped by every invalidation: a lookup that started before one must
    /// not store what it read (it may predate the change).
    generation: AtomicU64,
}

impl KeyCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// The slot of a key found by its id rather than its hash (a hash is
    /// hex, so the two kinds of slot never collide).
    pub fn id_slot(id: Uuid) -> String {
        format!("id:{id}")
    }

    /// The cached record of `hash` if it is fresh enough.
    pub fn get(&self, hash: &str) -> Option<Arc<KeyForAuth>> {
        let entry = self.entries.get(hash)?;
        if entry.fetched.elapsed() < KEY_CACHE_TTL {
            return Some(Arc::clone(&entry.record));
        }
        drop(entry);
        self.entries
            .remove_if(hash, |_, cached| cached.fetched.elapsed() >= KEY_CACHE_TTL);
        None
    }

    /// Call before reading the database; pass the value to `insert`.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Stores a record read from the database, unless an invalidation has
    /// happened since `generation` was taken.
    pub fn insert(&self, hash: &str, record: Arc<KeyForAuth>, generation: u64) {
        if self.entries.len() > SWEEP_ABOVE {
            self.entries
                .retain(|_, cached| cached.fetched.elapsed() < KEY_CACHE_TTL);
        }
        if self.generation() != generation {
            return;
        }
        self.entries.insert(
            hash.to_string(),
            Cached {
                record,
                fetched: Instant::now(),
            },
        );
        // An invalidation that raced with the insert wins.
        if self.generation() != generation {
            self.entries.remove(hash);
        }
    }

    /// Forgets the matching entries on this node.
    pub fn apply(&self, what: Invalidation) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        match what {
            Invalidation::Key(id) => self.entries.retain(|_, c| c.record.id != id),
            Invalidation::Company(id) => self.entries.retain(|_, c| c.record.company_id != id),
            Invalidation::All => self.entries.clear(),
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Forgets `what` on this node at once and on every other node through the
/// bus. Call after the change has committed.
pub async fn invalidate(state: &AppState, what: Invalidation) {
    state.access.keys.apply(what);
    state.realtime.bus.publish(TOPIC, what.encode()).await;
}

/// Applies the invalidations other nodes publish, until shutdown. The
/// subscription is taken before this returns, so nothing published after
/// `App::build` is missed.
pub fn spawn_invalidation_listener(state: &AppState) -> tokio::task::JoinHandle<()> {
    let mut messages = state.realtime.bus.subscribe();
    let access = state.access.clone();
    let mut shutdown = state.shutdown.clone();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = shutdown.wait_for(|stop| *stop) => return,
                received = messages.recv() => match received {
                    Ok(message) if message.topic == TOPIC => {
                        match Invalidation::decode(&message.payload) {
                            Some(what) => access.keys.apply(what),
                            None => tracing::warn!(payload = %message.payload, "unknown auth invalidation"),
                        }
                    }
                    Ok(_) => {}
                    // Missed messages may have been invalidations.
                    Err(RecvError::Lagged(_)) => access.keys.apply(Invalidation::All),
                    Err(RecvError::Closed) => return,
                },
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Timestamp;

    fn record(id: Uuid, company_id: Uuid) -> Arc<KeyForAuth> {
        Arc::new(KeyForAuth {
            id,
            company_id,
            mode: crate::auth::Mode::Test,
            scopes: crate::auth::ScopeSet::all(),
            rate_limit: 10,
            expires_at: None,
            is_active: true,
            last_used_at: Some(Timestamp::now()),
            company_status: crate::companies::CompanyStatus::Active,
        })
    }

    #[test]
    fn invalidation_round_trips_and_forgets() {
        let (key, company) = (Uuid::now_v7(), Uuid::now_v7());
        for what in [
            Invalidation::Key(key),
            Invalidation::Company(company),
            Invalidation::All,
        ] {
            assert_eq!(Invalidation::decode(&what.encode()), Some(what));
        }
        let cache = KeyCache::new();
        cache.insert("h", record(key, company), cache.generation());
        assert!(cache.get("h").is_some());
        cache.apply(Invalidation::Company(company));
        assert!(cache.get("h").is_none());
    }

    #[test]
    fn a_lookup_older_than_an_invalidation_is_not_cached() {
        let cache = KeyCache::new();
        let before = cache.generation();
        cache.apply(Invalidation::Key(Uuid::now_v7()));
        cache.insert("h", record(Uuid::now_v7(), Uuid::now_v7()), before);
        assert!(cache.get("h").is_none());
    }
}
