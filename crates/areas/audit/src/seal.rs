//! The sealer: gives a company's committed, unsealed entries the next
//! numbers of its chain and their hashes, after they commit, so the writes
//! that record entries never wait for the chain. One transaction per batch
//! holds the company's chain row (`audit_chains`; on Postgres `FOR
//! UPDATE`, on SQLite the write lock every transaction takes), so two
//! nodes sealing one company take turns and make one unbroken chain.

use std::future::Future;
use std::pin::Pin;

use uuid::Uuid;

use crate::db::{Backend, Db, Query, Tx};
use crate::error::StoreError;
use crate::time::Timestamp;

use super::chain::{CANON, CHAIN_COLUMNS, ChainRow, GENESIS};
use super::model::Entry;

/// What else a sealing transaction does with the entries it sealed, in
/// that transaction: the service's queues the `audit.entry` event for the
/// webhooks that subscribe to it (the event carries the entry's place in
/// the chain, so it is sent once sealed).
pub trait Sealed: Send + Sync {
    fn sealed<'a>(
        &'a self,
        tx: &'a mut Tx,
        company_id: Uuid,
        entries: &'a [Entry],
        now: Timestamp,
    ) -> Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + 'a>>;
}

/// Nothing besides sealing.
pub struct SealOnly;

impl Sealed for SealOnly {
    fn sealed<'a>(
        &'a self,
        _tx: &'a mut Tx,
        _company_id: Uuid,
        _entries: &'a [Entry],
        _now: Timestamp,
    ) -> Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + 'a>> {
        Box::pin(async { Ok(()) })
    }
}

/// Entries one sealing transaction seals at most; the rest wait for the
/// next batch. Four values each in its one UPDATE: 2,001 placeholders,
/// under either backend's limit.
const BATCH: i64 = 500;

/// The sealer's bell: every transaction that records an entry rings it
/// once it has committed, so the sealer seals it then rather than at its
/// next poll.
pub const BELL: crate::db::BellName = "audit.sealer";

/// Companies with unsealed entries, at most `limit` (for the worker).
pub async fn companies_with_unsealed(db: &Db, limit: i64) -> Result<Vec<Uuid>, StoreError> {
    Query::new("SELECT DISTINCT company_id FROM audit_entries WHERE seq IS NULL LIMIT ")
        .push_bind(limit)
        .fetch_column(db)
        .await
}

/// The company's chain row, created at genesis if it has none, and held
/// until `tx` ends.
pub(crate) async fn hold_chain(tx: &mut Tx, company_id: Uuid) -> Result<(i64, String), StoreError> {
    Query::new(
        "INSERT INTO audit_chains (company_id, head_seq, head_hash, start_seq, start_hash) \
         VALUES ($1, 0, $2, 1, $2) ON CONFLICT (company_id) DO NOTHING",
    )
    .bind(company_id)
    .bind(GENESIS)
    .execute(&mut *tx)
    .await?;
    let lock = match tx.backend() {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    let (seq, hash): (i64, String) = Query::new(format!(
        "SELECT head_seq, head_hash FROM audit_chains WHERE company_id = $1{lock}"
    ))
    .bind(company_id)
    .fetch_one(&mut *tx)
    .await?;
    Ok((seq, hash))
}

/// Seals every committed, unsealed entry of company `company_id`, in the
/// order they were written, `then` doing its part in each batch's
/// transaction at `now`; answers how many. Entries a batch does not reach
/// are sealed by the next, in the same order.
pub async fn seal_company(
    db: &Db,
    company_id: Uuid,
    then: &dyn Sealed,
    now: Timestamp,
) -> Result<u64, StoreError> {
    let mut sealed = 0;
    loop {
        let batch = seal_batch(db, company_id, then, now).await?;
        sealed += batch;
        if batch < BATCH as u64 {
            return Ok(sealed);
        }
    }
}

async fn seal_batch(
    db: &Db,
    company_id: Uuid,
    then: &dyn Sealed,
    now: Timestamp,
) -> Result<u64, StoreError> {
    let mut tx = db.begin().await?;
    let (mut seq, mut hash) = hold_chain(&mut tx, company_id).await?;
    // A statement after the lock: on Postgres its snapshot (read
    // committed) holds every seal the previous holder made, so no entry is
    // sealed twice.
    let pending: Vec<ChainRow> = Query::new(format!(
        "SELECT {CHAIN_COLUMNS} FROM audit_entries WHERE company_id = $1 AND seq IS NULL \
         ORDER BY created_at, id LIMIT $2"
    ))
    .bind(company_id)
    .bind(BATCH)
    .fetch_all(&mut tx)
    .await?;
    if pending.is_empty() {
        tx.commit().await?;
        return Ok(0);
    }
    let count = pending.len() as u64;
    let mut entries = Vec::with_capacity(pending.len());
    let mut numbered = Vec::with_capacity(pending.len());
    for mut row in pending {
        let next = seq + 1;
        row.canon = CANON;
        let next_hash = row.hash_after(&hash, next);
        row.seq = Some(next);
        row.prev_hash = Some(std::mem::replace(&mut hash, next_hash.clone()));
        row.hash = Some(next_hash);
        seq = next;
        numbered.push(row.clone());
        entries.extend(super::list::entry_of(row));
    }
    numbers_of(&numbered).execute(&mut tx).await?;
    Query::new("UPDATE audit_chains SET head_seq = $2, head_hash = $3 WHERE company_id = $1")
        .bind(company_id)
        .bind(seq)
        .bind(&hash)
        .execute(&mut tx)
        .await?;
    then.sealed(&mut tx, company_id, &entries, now).await?;
    tx.commit().await?;
    Ok(count)
}

/// The one statement that gives every entry of `rows` its number and
/// hashes (each row numbered already): a round trip per batch rather than
/// per entry, so the sealer keeps up with a company's writes. A `VALUES`
/// list's columns are `column1…` on both backends. Its text depends on the
/// batch's size, so it is not kept prepared.
fn numbers_of(rows: &[ChainRow]) -> Query {
    let mut query = Query::new("UPDATE audit_entries SET seq = v.column2, hash = v.column3, ")
        .push("prev_hash = v.column4, canon = ")
        .push_bind(i64::from(CANON))
        .push(" FROM (VALUES ");
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            query = query.push(", ");
        }
        query = query
            .push("(")
            .push_bind(row.id)
            .push(", ")
            .push_bind(row.seq)
            .push(", ")
            .push_bind(row.hash.clone())
            .push(", ")
            .push_bind(row.prev_hash.clone())
            .push(")");
    }
    query
        .push(") AS v WHERE audit_entries.id = v.column1")
        .planned_per_call()
}

/// One pass of the worker: seals the entries of up to `companies`
/// companies; answers how many entries it sealed.
pub async fn seal_pass(
    db: &Db,
    companies: i64,
    then: &dyn Sealed,
    now: Timestamp,
) -> Result<u64, StoreError> {
    let mut sealed = 0;
    for company_id in companies_with_unsealed(db, companies).await? {
        sealed += seal_company(db, company_id, then, now).await?;
    }
    Ok(sealed)
}
