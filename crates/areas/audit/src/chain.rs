//! The hash chain: each sealed entry's `hash` is SHA-256 over the previous
//! entry's hash (hex) and the entry's canonical bytes, so changing,
//! removing or reordering an entry breaks every hash after it.
//!
//! Two canonical forms. `audit-v1` (entries sealed before erasure existed)
//! holds every field as stored. `audit-v2` holds the fields that can name a
//! person (actor name, changes, address, user agent) only through their
//! SHA-256 ([`ChainRow::personal_digest`]): erasing a person replaces those
//! fields and keeps their digest (`redacted_digest`), so the chain still
//! verifies and still pins what the entry said, while the words are gone.
//! A redacted entry says so (its changes read `{"redacted": true}`), so a
//! redaction cannot pass for the original.

use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::time::Timestamp;

/// The hash before a company's first entry.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// An entry's row as the chain reads it: everything it records, and where
/// it stands in the chain once sealed.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ChainRow {
    pub id: Uuid,
    pub company_id: Uuid,
    pub created_at: Timestamp,
    pub actor_type: String,
    pub actor_id: Option<Uuid>,
    pub actor_name: String,
    pub action: String,
    pub target_type: String,
    pub target_id: Option<Uuid>,
    pub changes: String,
    pub request_id: Option<String>,
    pub ip: Option<String>,
    pub user_agent: Option<String>,
    pub seq: Option<i64>,
    pub hash: Option<String>,
    pub prev_hash: Option<String>,
    /// The canonical form the entry was sealed in (1 or 2).
    pub canon: i32,
    /// The digest of the personal fields an erasure replaced (v2 only).
    pub redacted_digest: Option<String>,
}

/// The canonical form new entries are sealed in.
pub const CANON: i32 = 2;

/// The columns of [`ChainRow`], in its order.
pub const CHAIN_COLUMNS: &str = "id, company_id, created_at, actor_type, actor_id, actor_name, \
     action, target_type, target_id, changes, request_id, ip, user_agent, seq, hash, prev_hash, canon, redacted_digest";

impl ChainRow {
    /// The bytes the hash covers: a JSON array of the entry's fields and
    /// its number, texts as stored (an array of strings and nulls has one
    /// reading, so no two entries share their bytes).
    pub fn canonical(&self, seq: i64) -> Vec<u8> {
        if self.canon >= CANON {
            return self.canonical_v2(seq);
        }
        let fields = serde_json::json!([
            "audit-v1",
            self.id,
            self.company_id,
            seq,
            self.created_at.to_rfc3339(),
            self.actor_type,
            self.actor_id,
            self.actor_name,
            self.action,
            self.target_type,
            self.target_id,
            self.changes,
            self.request_id,
            self.ip,
            self.user_agent,
        ]);
        fields.to_string().into_bytes()
    }

    /// The v2 bytes: the personal fields by their digest, the stored one
    /// once they were redacted.
    fn canonical_v2(&self, seq: i64) -> Vec<u8> {
        let personal = match &self.redacted_digest {
            Some(digest) => digest.clone(),
            None => self.personal_digest(),
        };
        let fields = serde_json::json!([
            "audit-v2",
            self.id,
            self.company_id,
            seq,
            self.created_at.to_rfc3339(),
            self.actor_type,
            self.actor_id,
            self.action,
            self.target_type,
            self.target_id,
            self.request_id,
            personal,
        ]);
        fields.to_string().into_bytes()
    }

    /// SHA-256 (hex) of the fields that can name a person, as stored.
    pub fn personal_digest(&self) -> String {
        let fields = serde_json::json!([self.actor_name, self.changes, self.ip, self.user_agent]);
        hex::encode(Sha256::digest(fields.to_string().as_bytes()))
    }

    /// This entry's hash as entry `seq` after `prev_hash`.
    pub fn hash_after(&self, prev_hash: &str, seq: i64) -> String {
        let mut digest = Sha256::new();
        digest.update(prev_hash.as_bytes());
        digest.update(self.canonical(seq));
        hex::encode(digest.finalize())
    }
}
