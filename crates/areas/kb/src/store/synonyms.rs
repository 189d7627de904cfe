//! A tenant's synonym groups: read by every suggestion, replaced whole by
//! `PUT /kb/synonyms`.

use sqlx::types::Json;

use crate::auth::Tenant;
use crate::db::{Db, Query};
use crate::error::StoreError;
use crate::time::Timestamp;

/// The tenant's synonym groups as set, or none.
pub async fn synonym_groups(db: &Db, tenant: &Tenant) -> Result<Vec<Vec<String>>, StoreError> {
    let stored: Option<(Json<Vec<Vec<String>>>,)> =
        Query::new("SELECT term_groups FROM kb_synonyms WHERE ")
            .push_tenant(tenant, "")
            .fetch_optional(db)
            .await?;
    Ok(stored.map(|(groups,)| groups.0).unwrap_or_default())
}

/// Replaces the tenant's synonym groups (an empty list clears them).
pub async fn set_synonym_groups(
    db: &Db,
    tenant: &Tenant,
    groups: &[Vec<String>],
    now: Timestamp,
) -> Result<(), StoreError> {
    Query::new(
        "INSERT INTO kb_synonyms (company_id, mode, term_groups, updated_at) \
         VALUES ($1, $2, $3, $4) \
         ON CONFLICT (company_id, mode) DO UPDATE \
         SET term_groups = excluded.term_groups, updated_at = excluded.updated_at",
    )
    .bind_tenant(tenant)
    .bind(serde_json::json!(groups))
    .bind(now)
    .execute(db)
    .await
}
