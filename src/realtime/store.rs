//! SQL of the realtime area: the server secret from which socket and visitor
//! tokens are signed. It is created once, by whichever node asks first, and
//! read by every node, so a token signed on one node verifies on all.

use crate::auth::key::random_base62;
use crate::db::{Db, Query};
use crate::error::StoreError;
use crate::time::Timestamp;

/// The secret named `name`, created (random, 43 base62 characters ≈ 256
/// bits) if no node has created it yet.
pub async fn server_secret(db: &Db, name: &str) -> Result<String, StoreError> {
    let candidate = random_base62(43);
    Query::new(
        "INSERT INTO server_secrets (name, value, created_at) VALUES ($1, $2, $3) \
         ON CONFLICT (name) DO NOTHING",
    )
    .bind(name)
    .bind(candidate)
    .bind(Timestamp::now())
    .execute(db)
    .await?;
    Query::new("SELECT value FROM server_secrets WHERE name = $1")
        .bind(name)
        .fetch_scalar(db)
        .await
}
