//! SQL for one-time links: an invitation (sets the first password) and a
//! password reset. The link carries a random secret; the store keeps its
//! SHA-256, when it expires and when it was used. Using one is a single
//! statement that claims it, so two uses racing each other cannot both win.

use uuid::Uuid;

use crate::db::{Query, Tx};
use crate::error::StoreError;
use crate::time::Timestamp;

crate::text_enum! {
    /// What a one-time link is for.
    pub enum TokenKind {
        Invitation = "invitation",
        PasswordReset = "password_reset",
    }
}

/// The account a used link was for.
#[derive(Debug, Clone, Copy, sqlx::FromRow)]
pub struct LinkedAccount {
    pub company_id: Uuid,
    pub user_id: Uuid,
}

/// A new link's secret: what goes into the URL. Its SHA-256 (hex) is what
/// `issue` stores.
pub fn new_secret() -> String {
    crate::key::random_base62(43)
}

/// Stores a link of `kind` for user `user_id` whose secret hashes to
/// `digest`, valid until `expires_at`. Earlier unused links of the same kind
/// for the user stop working: only the newest one sent is good.
pub async fn issue(
    tx: &mut Tx,
    kind: TokenKind,
    account: LinkedAccount,
    digest: &str,
    now: Timestamp,
    expires_at: Timestamp,
) -> Result<(), StoreError> {
    Query::new(
        "UPDATE account_tokens SET used_at = $3 WHERE user_id = $1 AND kind = $2 \
         AND used_at IS NULL",
    )
    .bind(account.user_id)
    .bind(kind.as_str())
    .bind(now)
    .execute(&mut *tx)
    .await?;
    Query::new(
        "INSERT INTO account_tokens (digest, kind, company_id, user_id, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(digest)
    .bind(kind.as_str())
    .bind(account.company_id)
    .bind(account.user_id)
    .bind(now)
    .bind(expires_at)
    .execute(&mut *tx)
    .await
}

/// Uses the link of `kind` whose secret hashes to `digest`, if it is unused
/// and unexpired at `now`: the account it was for.
pub async fn redeem(
    tx: &mut Tx,
    kind: TokenKind,
    digest: &str,
    now: Timestamp,
) -> Result<Option<LinkedAccount>, StoreError> {
    Query::new(
        "UPDATE account_tokens SET used_at = $3 WHERE digest = $1 AND kind = $2 \
         AND used_at IS NULL AND expires_at > $3 RETURNING company_id, user_id",
    )
    .bind(digest)
    .bind(kind.as_str())
    .bind(now)
    .fetch_optional(&mut *tx)
    .await
}
