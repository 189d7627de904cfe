//! SQL of the change feed. Entries are rows of the `events` table that name
//! a record. Each tenant's entries are numbered 1, 2, 3, … without gaps, in
//! commit order, by taking the tenant's `changes` counter row while the
//! writing transaction commits: on Postgres a deferred trigger does it at
//! COMMIT (0015_change_feed.sql), on SQLite (one writer at a time) the
//! store does it when it writes the entry. Whoever holds the counter row
//! commits before the next writer can number anything, so a reader that
//! reads the counter's value N and then the entries up to N sees every
//! entry numbered up to N: none can appear behind a position already read.

use serde_json::Value;
use sqlx::types::Json;
use uuid::Uuid;

use super::model::{Cursor, Op, RecordType};
use crate::auth::Tenant;
use crate::db::{Db, Query};
use crate::error::StoreError;

/// One entry as the feed returns it.
#[derive(Debug, sqlx::FromRow)]
pub struct Entry {
    pub seq: i64,
    pub record_type: RecordType,
    pub record_id: Uuid,
    pub op: Op,
    pub record: Option<Json<Value>>,
}

/// What a read of the feed found.
#[derive(Debug)]
pub enum Read {
    /// Entries after the cursor (oldest first) and where to continue.
    Page { entries: Vec<Entry>, next: Cursor },
    /// The retention pass has deleted entries after the cursor.
    Expired,
    /// The cursor is beyond the tenant's feed (not one this feed gave).
    Unknown,
}

/// Up to `limit` entries of `types` after `after` (after the oldest
/// retained entry when None), in feed order.
pub async fn read(
    db: &Db,
    tenant: &Tenant,
    after: Option<Cursor>,
    types: &[RecordType],
    limit: i64,
) -> Result<Read, StoreError> {
    let deleted_up_to = watermark(db, tenant).await?;
    let start = after.map_or(deleted_up_to, |cursor| cursor.0);
    if start < deleted_up_to {
        return Ok(Read::Expired);
    }
    // Read first, so everything numbered up to `head` is visible to the
    // entry query that follows.
    let head = head(db, tenant).await?;
    if start > head {
        return Ok(Read::Unknown);
    }
    let entries: Vec<Entry> =
        Query::new("SELECT e.seq, e.record_type, e.record_id, e.op, e.record FROM events e WHERE ")
            .push_tenant(tenant, "e")
            .push(" AND e.seq > ")
            .push_bind(start)
            .push(" AND e.seq <= ")
            .push_bind(head)
            .push(" AND e.record_type IN ")
            .push_bind_list(types.iter().map(|kind| kind.as_str()))
            .push(" ORDER BY e.seq LIMIT ")
            .push_bind(limit)
            .fetch_all(db)
            .await?;
    // A retention pass that deleted entries after `start` while we read
    // has raised the watermark in the same transaction.
    if watermark(db, tenant).await? > start {
        return Ok(Read::Expired);
    }
    let full = i64::try_from(entries.len()).unwrap_or(i64::MAX) >= limit;
    let next = match entries.last() {
        Some(last) if full => Cursor(last.seq),
        _ => Cursor(head),
    };
    Ok(Read::Page { entries, next })
}

/// The number of the tenant's latest committed entry (0 before any).
async fn head(db: &Db, tenant: &Tenant) -> Result<i64, StoreError> {
    let value: Option<(i64,)> =
        Query::new("SELECT c.value FROM counters c WHERE c.name = 'changes' AND ")
            .push_tenant(tenant, "c")
            .fetch_optional(db)
            .await?;
    Ok(value.map_or(0, |(value,)| value))
}

/// The highest entry number the retention pass has deleted (0 before any).
async fn watermark(db: &Db, tenant: &Tenant) -> Result<i64, StoreError> {
    let value: Option<(i64,)> = Query::new("SELECT w.seq FROM change_feed_watermarks w WHERE ")
        .push_tenant(tenant, "w")
        .fetch_optional(db)
        .await?;
    Ok(value.map_or(0, |(seq,)| seq))
}
