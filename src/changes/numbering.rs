//! The worker that numbers change-feed entries nobody has read yet (see
//! `store::number_committed`): without it, a tenant whose feed no one
//! follows would keep its entries unnumbered, and the retention pass never
//! deletes an unnumbered entry. Every node runs it; two nodes numbering one
//! tenant take turns on its counter row.

use std::time::Duration;

use tokio::task::JoinHandle;

use super::store;
use crate::db::Db;

/// How often the worker looks for unnumbered entries: an entry waits for
/// its number about this long when no reader asks for it first.
const EVERY: Duration = Duration::from_secs(1);

/// Tenants one pass numbers at most; the next pass takes the rest.
const TENANTS_PER_PASS: i64 = 500;

pub fn spawn(db: Db, shutdown: tokio::sync::watch::Receiver<bool>) -> JoinHandle<()> {
    let first = tokio::time::Instant::now() + EVERY;
    crate::time::every(shutdown, first, EVERY, move || {
        let db = db.clone();
        async move {
            let tenants = match store::tenants_with_unnumbered(&db, TENANTS_PER_PASS).await {
                Ok(tenants) => tenants,
                Err(err) => {
                    tracing::warn!(error = %err, "listing tenants with unnumbered feed entries failed");
                    return;
                }
            };
            for tenant in &tenants {
                if let Err(err) = store::number_committed(&db, tenant).await {
                    tracing::warn!(error = %err, company_id = %tenant.company_id, "numbering feed entries failed");
                }
            }
        }
    })
}
