//! Secrets every node shares (the signing key of attachment links, of
//! visitor tokens, …), created by whichever node asks first.

use store::{Db, Query};
use vocab::error::StoreError;

use crate::key::random_base62;

/// The secret named `name`, created (random, 43 base62 characters ≈ 256
/// bits) if no node has created it yet. Stamped with the database's clock:
/// it is asked for before a node's clock is at hand, and orders nothing.
pub async fn server_secret(db: &Db, name: &str) -> Result<String, StoreError> {
    let candidate = random_base62(43);
    Query::new(format!(
        "INSERT INTO server_secrets (name, value, created_at) VALUES ($1, $2, {now}) \
         ON CONFLICT (name) DO NOTHING",
        now = db.backend().now_sql()
    ))
    .bind(name)
    .bind(candidate)
    .execute(db)
    .await?;
    Query::new("SELECT value FROM server_secrets WHERE name = $1")
        .bind(name)
        .fetch_scalar(db)
        .await
}
