//! The hash chain: each sealed entry's `hash` is SHA-256 over the previous
//! entry's hash (hex) and the entry's canonical bytes, so changing,
//! removing or reordering an entry breaks every hash after it.

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
}

/// The columns of [`ChainRow`], in its order.
pub const CHAIN_COLUMNS: &str = "id, company_id, created_at, actor_type, actor_id, actor_name, \
     action, target_type, target_id, changes, request_id, ip, user_agent, seq, hash, prev_hash";

impl ChainRow {
    /// The bytes the hash covers: a JSON array of the entry's fields and
    /// its number, texts as stored (an array of strings and nulls has one
    /// reading, so no two entries share their bytes).
    pub fn canonical(&self, seq: i64) -> Vec<u8> {
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

    /// This entry's hash as entry `seq` after `prev_hash`.
    pub fn hash_after(&self, prev_hash: &str, seq: i64) -> String {
        let mut digest = Sha256::new();
        digest.update(prev_hash.as_bytes());
        digest.update(self.canonical(seq));
        hex::encode(digest.finalize())
    }
}
