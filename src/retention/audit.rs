//! The audit log past each company's retention (`auditRetentionDays` in
//! `/settings`; none by default, so every entry is kept): the company's
//! oldest sealed entries are dropped from the start of its chain, as
//! `supportdesk audit prune` drops them, leaving the checkpoint that the
//! rest verifies from. Entries not yet sealed wait for a later pass.

use std::time::Duration;

use super::TableReport;
use crate::db::Db;
use crate::error::StoreError;
use crate::time::Timestamp;

/// Prunes every company with a retention: the entries written before its
/// retention counted back from `now`.
pub async fn prune(db: &Db, now: Timestamp) -> Result<TableReport, StoreError> {
    let mut report = TableReport {
        table: "audit_entries",
        ..TableReport::default()
    };
    for (company, days) in crate::settings::store::audit_retentions(db).await? {
        let age = Duration::from_secs(u64::from(days) * 24 * 60 * 60);
        let dropped = crate::audit::prune::prune(db, company, super::before(now, age), now).await?;
        if dropped > 0 {
            report.rows_deleted += dropped;
            report.batches += 1;
            report.largest_batch = report.largest_batch.max(dropped);
        }
    }
    Ok(report)
}
