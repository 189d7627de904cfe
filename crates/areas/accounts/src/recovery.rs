//! SQL for the one-time recovery codes of an account with a second factor:
//! only each code's SHA-256 is kept, and using one marks it used in the same
//! statement that finds it.

use uuid::Uuid;

use crate::db::{Db, Query, Tx};
use crate::error::StoreError;
use crate::time::Timestamp;

/// How many codes a confirmation hands out.
pub const CODES: usize = 10;

/// A new code as the user writes it down: ten base62 characters.
pub fn new_code() -> String {
    crate::key::random_base62(10)
}

/// Replaces user `user_id`'s codes with the ones hashing to `digests`.
pub async fn replace(tx: &mut Tx, user_id: Uuid, digests: &[String]) -> Result<(), StoreError> {
    Query::new("DELETE FROM account_recovery_codes WHERE user_id = $1")
        .bind(user_id)
        .execute(&mut *tx)
        .await?;
    for digest in digests {
        Query::new("INSERT INTO account_recovery_codes (user_id, digest) VALUES ($1, $2)")
            .bind(user_id)
            .bind(digest.as_str())
            .execute(&mut *tx)
            .await?;
    }
    Ok(())
}

/// Uses user `user_id`'s unused code hashing to `digest` at `now`; whether
/// there was one.
pub async fn redeem(
    db: &Db,
    user_id: Uuid,
    digest: &str,
    now: Timestamp,
) -> Result<bool, StoreError> {
    let used = Query::new(
        "UPDATE account_recovery_codes SET used_at = $3 WHERE user_id = $1 AND digest = $2 \
         AND used_at IS NULL",
    )
    .bind(user_id)
    .bind(digest)
    .bind(now)
    .rows_affected(db)
    .await?;
    Ok(used == 1)
}
