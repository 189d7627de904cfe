//! SQL of the change feed. Entries are rows of the `events` table that name
//! a record. Each tenant's entries are numbered 1, 2, 3, … without gaps, and
//! a reader that sees number N sees every entry up to N.
//!
//! On Postgres an entry is written without a number, and numbered after its
//! write has committed by [`number_committed`]: one short transaction that
//! locks the tenant's `changes` counter row, gives the committed unnumbered
//! entries the next numbers in the order they were written, and raises the
//! counter. Every feed read runs it for its tenant first (so a reader sees
//! every write that committed before it asked), and a worker runs it each
//! second for every tenant (so entries nobody reads get numbers, and the
//! retention pass, which keeps unnumbered entries, can delete them). No
//! write waits for the counter row at its own commit. On SQLite (one writer
//! at a time) the store numbers an entry when it writes it.

use serde_json::Value;
use sqlx::types::Json;
use uuid::Uuid;

use super::model::{Cursor, Op, RecordType};
use crate::actor::Actor;
use crate::auth::{Mode, Tenant};
use crate::db::{Backend, Db, Query, TeamOwned};
use crate::error::StoreError;

/// One entry as the feed returns it.
#[derive(Debug, sqlx::FromRow)]
pub struct Entry {
    pub seq: i64,
    pub record_type: RecordType,
    pub record_id: Uuid,
    pub op: Op,
    pub record: Option<Json<Value>>,
    pub actor: Option<Json<Actor>>,
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
/// retained entry when None), in feed order; the entries of internal notes
/// only when `notes` (the tickets' rule of who reads them, which the
/// caller applies: this crate does not know tickets).
pub async fn read(
    db: &Db,
    tenant: &Tenant,
    after: Option<Cursor>,
    types: &[RecordType],
    notes: bool,
    limit: i64,
) -> Result<Read, StoreError> {
    number_committed(db, tenant).await?;
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
    let entries = Query::new(
        "SELECT e.seq, e.record_type, e.record_id, e.op, e.record, e.actor FROM events e WHERE ",
    )
    .push_tenant(tenant, "e")
    .push(" AND e.seq > ")
    .push_bind(start)
    .push(" AND e.seq <= ")
    .push_bind(head)
    .push(" AND e.record_type IN ")
    .push_bind_list(types.iter().map(|kind| kind.as_str()));
    let entries = visible(entries, tenant)
        .push(if notes {
            ""
        } else {
            hidden_notes(db.backend())
        })
        .push(" ORDER BY e.seq LIMIT ")
        .push_bind(limit);
    let entries: Vec<Entry> = entries.fetch_all(db).await?;
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

/// One entry with the event it records (its name and data), for those who
/// act on what happened rather than on the record (automations' triggers).
#[derive(Debug, sqlx::FromRow)]
pub struct Happened {
    pub seq: i64,
    pub name: String,
    pub data: Json<Value>,
    pub actor: Option<Json<Actor>>,
}

/// Up to `limit` entries of the events `names` after entry `after`, in
/// feed order, and the number of the tenant's latest committed entry
/// (everything up to it has been looked at once these are).
pub async fn happened_after(
    db: &Db,
    tenant: &Tenant,
    after: i64,
    names: &[&str],
    limit: i64,
) -> Result<(Vec<Happened>, i64), StoreError> {
    let head = committed_head(db, tenant).await?;
    let entries = Query::new("SELECT e.seq, e.name, e.data, e.actor FROM events e WHERE ")
        .push_tenant(tenant, "e")
        .push(" AND e.seq > ")
        .push_bind(after)
        .push(" AND e.seq <= ")
        .push_bind(head)
        .push(" AND e.name IN ")
        .push_bind_list(names.iter().copied())
        .push(" ORDER BY e.seq LIMIT ")
        .push_bind(limit)
        .fetch_all(db)
        .await?;
    Ok((entries, head))
}

/// The number of the tenant's latest committed entry, once every committed
/// entry has its number.
pub async fn committed_head(db: &Db, tenant: &Tenant) -> Result<i64, StoreError> {
    number_committed(db, tenant).await?;
    head(db, tenant).await
}

/// Narrows entries `e` to the records the tenant sees: for a tenant limited
/// to teams, an entry of a ticket, comment, chat session or message is kept
/// while its record is in one of the teams now (so the entries of a record
/// since deleted, whose team is no longer known, are left out); entries of
/// other types are kept.
fn visible(query: Query, tenant: &Tenant) -> Query {
    [
        ("e.record_type = 'ticket'", TeamOwned::Ticket),
        ("e.record_type = 'comment'", TeamOwned::Comment),
        ("e.record_type = 'chat_session'", TeamOwned::ChatSession),
        ("e.record_type = 'chat_message'", TeamOwned::ChatMessage),
    ]
    .into_iter()
    .fold(query, |query, (kind, owned)| {
        query.push_visible_when(tenant, kind, owned, "e.record_id")
    })
}

/// The condition on entries `e` that leaves out those of internal notes:
/// a comment's record says `isInternal` (a deleted comment's entry has no
/// record, and names only its id).
fn hidden_notes(backend: Backend) -> &'static str {
    match backend {
        Backend::Postgres => {
            " AND NOT (e.record_type = 'comment' AND coalesce(e.record->>'isInternal', '') = 'true')"
        }
        Backend::Sqlite => {
            " AND NOT (e.record_type = 'comment' \
             AND coalesce(json_extract(e.record, '$.isInternal'), 0) = 1)"
        }
    }
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

/// Entries one numbering transaction numbers at most; a tenant with more
/// gets several, each short.
const NUMBERING_BATCH: i64 = 5_000;

/// Numbers `tenant`'s committed, still unnumbered entries (Postgres; on
/// SQLite every entry has its number from its write). Returns how many it
/// numbered.
pub async fn number_committed(db: &Db, tenant: &Tenant) -> Result<u64, StoreError> {
    if db.backend() == Backend::Sqlite || !has_unnumbered(db, tenant).await? {
        return Ok(0);
    }
    let mut numbered = 0;
    loop {
        let batch = number_batch(db, tenant).await?;
        numbered += batch;
        if batch < NUMBERING_BATCH.unsigned_abs() {
            return Ok(numbered);
        }
    }
}

/// Whether `tenant` has an entry without a number (an index probe, no lock:
/// a feed read that finds none numbers nothing).
async fn has_unnumbered(db: &Db, tenant: &Tenant) -> Result<bool, StoreError> {
    Query::new("SELECT EXISTS (SELECT 1 FROM events e WHERE ")
        .push_tenant(tenant, "e")
        .push(" AND e.record_type IS NOT NULL AND e.seq IS NULL)")
        .fetch_scalar(db)
        .await
}

/// One numbering transaction: up to [`NUMBERING_BATCH`] entries.
async fn number_batch(db: &Db, tenant: &Tenant) -> Result<u64, StoreError> {
    let mut tx = db.begin().await?;
    // The counter row first: whoever holds it is the only one numbering
    // this tenant's entries until it commits.
    Query::new(
        "INSERT INTO counters (company_id, mode, name, value) VALUES ($1, $2, 'changes', 0) \
         ON CONFLICT (company_id, mode, name) DO NOTHING",
    )
    .bind_tenant(tenant)
    .execute(&mut tx)
    .await?;
    let head: i64 = Query::new("SELECT c.value FROM counters c WHERE c.name = 'changes' AND ")
        .push_tenant(tenant, "c")
        .push(" FOR UPDATE")
        .fetch_scalar(&mut tx)
        .await?;
    // A statement of its own, after the lock: its snapshot (read committed)
    // includes every number the previous holder gave, so no entry is
    // numbered twice, and every entry whose write has committed.
    let numbered = Query::new("WITH pending AS (SELECT e.id, e.written FROM events e WHERE ")
        .push_tenant(tenant, "e")
        .push(" AND e.record_type IS NOT NULL AND e.seq IS NULL ORDER BY e.written, e.id LIMIT ")
        .push_bind(NUMBERING_BATCH)
        .push(
            "), numbers AS (SELECT id, row_number() OVER (ORDER BY written, id) AS n FROM pending) \
         UPDATE events SET seq = ",
        )
        .push_bind(head)
        .push(" + numbers.n FROM numbers WHERE events.id = numbers.id")
        .rows_affected(&mut tx)
        .await?;
    Query::new("UPDATE counters c SET value = c.value + ")
        .push_bind(i64::try_from(numbered).unwrap_or(i64::MAX))
        .push(" WHERE c.name = 'changes' AND ")
        .push_tenant(tenant, "c")
        .execute(&mut tx)
        .await?;
    tx.commit().await?;
    Ok(numbered)
}

#[derive(sqlx::FromRow)]
struct TenantRow {
    company_id: Uuid,
    mode: Mode,
}

/// Tenants with entries still without a number (Postgres), for the worker.
pub async fn tenants_with_unnumbered(db: &Db, limit: i64) -> Result<Vec<Tenant>, StoreError> {
    if db.backend() == Backend::Sqlite {
        return Ok(Vec::new());
    }
    let rows: Vec<TenantRow> = Query::new(
        "SELECT DISTINCT e.company_id, e.mode FROM events e \
         WHERE e.record_type IS NOT NULL AND e.seq IS NULL LIMIT ",
    )
    .push_bind(limit)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| Tenant::new(row.company_id, row.mode))
        .collect())
}
