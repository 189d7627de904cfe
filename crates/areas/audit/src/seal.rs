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
/// next batch.
const BATCH: i64 = 500;

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
    for mut row in pending {
        let next = seq + 1;
        row.canon = CANON;
        let next_hash = row.hash_after(&hash, next);
        Query::new(
            "UPDATE audit_entries SET seq = $2, hash = $3, prev_hash = $4, canon = $5 \
             WHERE id = $1",
        )
        .bind(row.id)
        .bind(next)
        .bind(&next_hash)
        .bind(&hash)
        .bind(i64::from(CANON))
        .execute(&mut tx)
        .await?;
        row.seq = Some(next);
        row.prev_hash = Some(std::mem::replace(&mut hash, next_hash.clone()));
        row.hash = Some(next_hash);
        seq = next;
        entries.extend(super::list::entry_of(row));
    }
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
