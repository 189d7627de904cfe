//! Authentication by key id, for credentials that name the key behind them
//! instead of presenting it (socket tokens): the same cache and the same
//! rules as a presented key.

use std::sync::Arc;

use axum::http::StatusCode;
use uuid::Uuid;

use super::Principal;
use super::cache::KeyCache;
use super::middleware::check_record;
use crate::error::ApiError;
use crate::keys::store as key_store;
use crate::state::AppState;

/// The principal of key `key_id` as it stands now, or the 401/403 that key
/// would get on REST (401 `invalid_api_key` once it no longer exists).
pub async fn principal_by_id(state: &AppState, key_id: Uuid) -> Result<Principal, ApiError> {
    let cache = &state.access.keys;
    let slot = KeyCache::id_slot(key_id);
    let record = match cache.get(&slot) {
        Some(record) => record,
        None => {
            let generation = cache.generation();
            let record = key_store::find_for_auth_by_id(&state.db, key_id)
                .await
                .map_err(ApiError::from)?
                .map(Arc::new)
                .ok_or_else(|| {
                    ApiError::new(
                        StatusCode::UNAUTHORIZED,
                        "invalid_api_key",
                        "Invalid API key",
                    )
                })?;
            cache.insert(&slot, Arc::clone(&record), generation);
            record
        }
    };
    check_record(&record)
}
