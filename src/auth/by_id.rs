//! Authentication by key id, for credentials that name the key behind them
//! instead of presenting it (socket tokens): the same cache and the same
//! rules as a presented key.

use std::sync::Arc;

use axum::http::StatusCode;
use uuid::Uuid;

use super::Principal;
use super::access::Access;
use super::cache::Slot;
use super::ready::ReadyKey;
use crate::db::Db;
use crate::error::{ApiError, ErrorCode};
use crate::keys::store as key_store;

/// The principal of key `key_id` as it stands now, or the 401/403 that key
/// would get on REST (401 `invalid_api_key` once it no longer exists).
pub async fn principal_by_id(
    access: &Access,
    db: &Db,
    key_id: Uuid,
) -> Result<Principal, ApiError> {
    let cache = &access.keys;
    let slot = Slot::Id(key_id);
    let key = match cache.get(&slot) {
        Some(key) => key,
        None => {
            let generation = cache.generation();
            let record = key_store::find_for_auth_by_id(db, key_id)
                .await
                .map_err(ApiError::from)?
                .ok_or_else(|| {
                    ApiError::new(
                        StatusCode::UNAUTHORIZED,
                        ErrorCode::InvalidApiKey,
                        "Invalid API key",
                    )
                })?;
            let key = Arc::new(ReadyKey::new(&record, access.window, access.clock().now()));
            cache.insert(slot, Arc::clone(&key), generation);
            key
        }
    };
    key.principal(access.clock().now())
}
