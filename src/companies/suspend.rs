//! Suspending a company: the store's change, then every node told at once
//! (the key caches forget its keys, its open sockets close) rather than
//! after the key cache's 10 s.

use uuid::Uuid;

use super::model::Company;
use super::store;
use crate::auth::access::Access;
use crate::auth::cache::Invalidation;
use crate::db::Db;
use crate::error::StoreError;
use crate::realtime::bus::Bus;
use crate::time::Timestamp;

/// Suspends (or reactivates) company `id` at `now`, and has every node
/// apply it to cached keys and sessions and to open sockets.
pub async fn set_suspended(
    db: &Db,
    access: &Access,
    bus: &Bus,
    id: Uuid,
    suspended: bool,
    now: Timestamp,
) -> Result<Company, StoreError> {
    let company = store::set_suspended(db, id, suspended, now).await?;
    access.invalidate(bus, Invalidation::Company(id)).await;
    if suspended {
        crate::realtime::credentials::company_suspended(bus, id).await;
    }
    Ok(company)
}
