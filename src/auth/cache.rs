//! The key cache: what authentication learnt about a key digest (or, for
//! socket tokens, a key id), kept for at most `KEY_CACHE_TTL`, so a request
//! needs no database read. Revoking, deactivating or changing a key through
//! the API (and suspending a company) publishes an invalidation on the bus
//! topic `auth`, which every node applies at once; so does the CLI when it
//! is given the nodes' Redis. Changes made otherwise (the CLI without
//! Redis) take effect within the TTL.
//!
//! It also remembers, for `UNKNOWN_TTL`, digests that matched no key, so a
//! flood of made-up (checksum-valid) keys costs one store query per distinct
//! key, not one per request. Creating a key through the API forgets them on
//! every node (`Invalidation::KeyCreated`), so a new key works at once.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::ratelimit::HotMap;
use uuid::Uuid;

use super::ready::ReadyKey;
use crate::generation::Generation;
use crate::realtime::bus::Bus;
use std::sync::Arc;

/// How long a cached key may be used without a database read.
pub const KEY_CACHE_TTL: Duration = Duration::from_secs(10);

/// The bus topic of cache invalidations.
pub const TOPIC: &str = "auth";

/// Entries are swept when the cache grows past this.
const SWEEP_ABOVE: usize = 10_000;

/// How long a digest that matched no key is answered without a query.
pub const UNKNOWN_TTL: Duration = Duration::from_secs(60);
/// At most this many unknown digests are remembered (about 10 MB).
pub const UNKNOWN_CAPACITY: usize = 100_000;
/// A full set of unknown digests is swept at most this often, so a flood
/// that keeps it full does not pay for a sweep on every request.
const UNKNOWN_SWEEP_EVERY: Duration = Duration::from_secs(1);

/// What to forget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invalidation {
    Key(Uuid),
    Company(Uuid),
    /// An agent session ended.
    Session(Uuid),
    /// Every session of a user ended (a new password, a deactivation, a
    /// role change).
    User(Uuid),
    /// A key was created: forget the digests remembered as unknown.
    KeyCreated,
    All,
}

impl Invalidation {
    /// Wire form on the bus: `key:<id>`, `company:<id>`, `created` or `all`.
    pub fn encode(&self) -> String {
        match self {
            Invalidation::Key(id) => format!("key:{id}"),
            Invalidation::Company(id) => format!("company:{id}"),
            Invalidation::Session(id) => format!("session:{id}"),
            Invalidation::User(id) => format!("user:{id}"),
            Invalidation::KeyCreated => "created".to_string(),
            Invalidation::All => "all".to_string(),
        }
    }

    pub fn decode(text: &str) -> Option<Invalidation> {
        match text {
            "all" => return Some(Invalidation::All),
            "created" => return Some(Invalidation::KeyCreated),
            _ => {}
        }
        let (kind, id) = text.split_once(':')?;
        let id = Uuid::parse_str(id).ok()?;
        match kind {
            "key" => Some(Invalidation::Key(id)),
            "company" => Some(Invalidation::Company(id)),
            "session" => Some(Invalidation::Session(id)),
            "user" => Some(Invalidation::User(id)),
            _ => None,
        }
    }
}

/// The SHA-256 of a presented key, as raw bytes (no hex text is made on a
/// cache hit).
pub type Digest = [u8; 32];

/// Where a key is cached: by the digest of the presented key, or by its id
/// for credentials that name the key (socket tokens).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Slot {
    Digest(Digest),
    Id(Uuid),
}

struct Cached {
    /// Shared so a cache hit (every authenticated request) costs one atomic
    /// increment.
    key: Arc<ReadyKey>,
    fetched: Instant,
}

#[derive(Default)]
pub struct KeyCache {
    entries: HotMap<Slot, Cached>,
    /// Digests that matched no key, with when that was learnt.
    unknown: HotMap<Digest, Instant>,
    unknown_swept: Mutex<Option<Instant>>,
    /// Bumped by every invalidation: a lookup that started before one must
    /// not store what it read (it may predate the change).
    generation: Generation,
    /// Key lookups that reached the store (the brute-force tests count them).
    store_lookups: AtomicU64,
}

impl KeyCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// The cached key in `slot` if it is fresh enough. A stale entry is
    /// kept (until a sweep or an invalidation) for `served_before`.
    pub fn get(&self, slot: &Slot) -> Option<Arc<ReadyKey>> {
        let entry = self.entries.get(slot)?;
        (entry.fetched.elapsed() < KEY_CACHE_TTL).then(|| Arc::clone(&entry.key))
    }

    /// Whether this node has found `slot` to be a key and not been told
    /// since that it changed: such a key may be looked up again even for a
    /// client over the failed-authentication limit (guesses never are).
    pub fn served_before(&self, slot: &Slot) -> bool {
        self.entries.contains_key(slot)
    }

    /// Call before reading the database; pass the value to `insert`.
    pub fn generation(&self) -> u64 {
        self.generation.current()
    }

    /// Stores a key read from the database, unless an invalidation has
    /// happened since `generation` was taken.
    pub fn insert(&self, slot: Slot, key: Arc<ReadyKey>, generation: u64) {
        if self.entries.len() > SWEEP_ABOVE {
            self.entries
                .retain(|_, cached| cached.fetched.elapsed() < KEY_CACHE_TTL);
        }
        let cached = Cached {
            key,
            fetched: Instant::now(),
        };
        self.generation
            .insert_if_current(generation, &self.entries, slot, cached);
    }

    /// Whether `digest` matched no key less than `UNKNOWN_TTL` ago.
    pub fn is_unknown(&self, digest: &Digest) -> bool {
        let Some(learnt) = self.unknown.get(digest).map(|at| *at) else {
            return false;
        };
        if learnt.elapsed() < UNKNOWN_TTL {
            return true;
        }
        self.unknown
            .remove_if(digest, |_, at| at.elapsed() >= UNKNOWN_TTL);
        false
    }

    /// Remembers that `digest` matched no key, unless an invalidation (a key
    /// created meanwhile) has happened since `generation` was taken. When
    /// the set is full of fresh entries the digest is not remembered: its
    /// requests then cost a query each, as before, within the per-IP limit.
    pub fn remember_unknown(&self, digest: Digest, generation: u64) {
        if self.unknown.len() >= UNKNOWN_CAPACITY {
            self.sweep_unknown();
            if self.unknown.len() >= UNKNOWN_CAPACITY {
                return;
            }
        }
        self.generation
            .insert_if_current(generation, &self.unknown, digest, Instant::now());
    }

    fn sweep_unknown(&self) {
        {
            let Ok(mut swept) = self.unknown_swept.lock() else {
                return;
            };
            if swept.is_some_and(|at| at.elapsed() < UNKNOWN_SWEEP_EVERY) {
                return;
            }
            *swept = Some(Instant::now());
        }
        self.unknown.retain(|_, at| at.elapsed() < UNKNOWN_TTL);
    }

    /// Counts one key lookup that goes to the store.
    pub fn note_store_lookup(&self) {
        self.store_lookups.fetch_add(1, Ordering::Relaxed);
    }

    /// Key lookups this node has sent to the store since it started.
    pub fn store_lookups(&self) -> u64 {
        self.store_lookups.load(Ordering::Relaxed)
    }

    /// Forgets the matching entries on this node.
    pub fn apply(&self, what: Invalidation) {
        self.generation.bump();
        match what {
            Invalidation::Key(id) => self.entries.retain(|_, c| c.key.key_id() != id),
            Invalidation::Company(id) => self.entries.retain(|_, c| c.key.company_id() != id),
            Invalidation::KeyCreated => self.unknown.clear(),
            // A user's personal keys follow them (a deactivation or a
            // role change); their sessions are the session cache's.
            Invalidation::User(id) => self.entries.retain(|_, c| c.key.owner_id() != Some(id)),
            Invalidation::Session(_) => {}
            Invalidation::All => {
                self.entries.clear();
                self.unknown.clear();
            }
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Forgets `what` on this node at once and on every other node through
/// `bus`. Call after the change has committed.
pub async fn invalidate(keys: &KeyCache, bus: &Bus, what: Invalidation) {
    keys.apply(what);
    bus.publish(TOPIC, what.encode()).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::store::KeyForAuth;
    use crate::time::Timestamp;

    fn ready(id: Uuid, company_id: Uuid) -> Arc<ReadyKey> {
        let record = KeyForAuth {
            id,
            name: "test key".to_string(),
            company_id,
            mode: crate::auth::Mode::Test,
            scopes: crate::auth::ScopeSet::all(),
            rate_limit: 10,
            expires_at: None,
            is_active: true,
            last_used_at: Some(Timestamp::now()),
            company_status: crate::companies::CompanyStatus::Active,
            db_now: Timestamp::now(),
            user_id: None,
            owner_name: None,
            owner_active: None,
            owner_role_name: None,
            owner_custom_scopes: None,
            owner_teams_only: None,
        };
        Arc::new(ReadyKey::new(
            &record,
            Duration::from_secs(3600),
            Timestamp::now(),
        ))
    }

    const H: Slot = Slot::Digest([7; 32]);

    fn digest_of(n: usize) -> Digest {
        let mut digest = [0; 32];
        digest[..8].copy_from_slice(&n.to_le_bytes());
        digest
    }

    #[test]
    fn invalidation_round_trips_and_forgets() {
        let (key, company) = (Uuid::now_v7(), Uuid::now_v7());
        for what in [
            Invalidation::Key(key),
            Invalidation::Company(company),
            Invalidation::KeyCreated,
            Invalidation::All,
        ] {
            assert_eq!(Invalidation::decode(&what.encode()), Some(what));
        }
        let cache = KeyCache::new();
        cache.insert(H, ready(key, company), cache.generation());
        assert!(cache.get(&H).is_some());
        cache.apply(Invalidation::Company(company));
        assert!(cache.get(&H).is_none());
    }

    #[test]
    fn a_lookup_older_than_an_invalidation_is_not_cached() {
        let cache = KeyCache::new();
        let before = cache.generation();
        cache.apply(Invalidation::Key(Uuid::now_v7()));
        cache.insert(H, ready(Uuid::now_v7(), Uuid::now_v7()), before);
        assert!(cache.get(&H).is_none());
    }

    #[test]
    fn unknown_digests_are_remembered_until_a_key_is_created() {
        let cache = KeyCache::new();
        cache.remember_unknown(digest_of(1), cache.generation());
        assert!(cache.is_unknown(&digest_of(1)));
        assert!(!cache.is_unknown(&digest_of(2)));
        cache.apply(Invalidation::Key(Uuid::now_v7()));
        assert!(cache.is_unknown(&digest_of(1)), "a key change leaves them");
        cache.apply(Invalidation::KeyCreated);
        assert!(!cache.is_unknown(&digest_of(1)));
    }

    #[test]
    fn a_miss_older_than_a_key_creation_is_not_remembered() {
        let cache = KeyCache::new();
        let before = cache.generation();
        cache.apply(Invalidation::KeyCreated);
        cache.remember_unknown(digest_of(1), before);
        assert!(!cache.is_unknown(&digest_of(1)));
    }

    #[test]
    fn unknown_digests_are_bounded() {
        let cache = KeyCache::new();
        let generation = cache.generation();
        for n in 0..UNKNOWN_CAPACITY + 10 {
            cache.remember_unknown(digest_of(n), generation);
        }
        assert_eq!(cache.unknown.len(), UNKNOWN_CAPACITY);
        assert!(!cache.is_unknown(&digest_of(UNKNOWN_CAPACITY + 5)));
    }
}
