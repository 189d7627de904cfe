//! Erasing a person from the event log, which is also the change feed:
//! the entries about their records, or naming them, become tombstones (the
//! data says only `{"erased": true}`, a feed entry's snapshot is dropped
//! and it reads as a delete of its record), the actor that names them is
//! scrubbed, and their webhook deliveries carry the tombstone too.

use store::{Backend, IdLists, Query, Tx};
use uuid::Uuid;
use vocab::error::StoreError;
use vocab::tenant::Tenant;

use infra::erasure::{Column, Person, json_text, scrub_rows};

/// What an erased event's data reads.
pub const TOMBSTONE: &str = r#"{"erased":true}"#;

/// Records a batch's tombstones list at most (the rest wait for the next
/// statement).
const CHUNK: usize = 500;

/// Turns the tenant's events about `records` into tombstones, in `tx`;
/// answers how many.
pub async fn tombstone_records(
    tx: &mut Tx,
    tenant: &Tenant,
    records: &[Uuid],
    person: &Person,
) -> Result<u64, StoreError> {
    let head = Query::new("SELECT id FROM events WHERE ");
    let mut done = 0;
    for statement in IdLists::of("record_id", records).statements(&head, tenant, "") {
        let ids: Vec<Uuid> = statement.fetch_column(&mut *tx).await?;
        done += tombstone(tx, &ids, person).await?;
    }
    Ok(done)
}

/// Turns the tenant's events whose data, snapshot or actor names `person`
/// into tombstones, in `tx`: what no record id leads to (an event about
/// the contact, a key's change that quoted them).
pub async fn tombstone_mentions(
    tx: &mut Tx,
    tenant: &Tenant,
    person: &Person,
) -> Result<u64, StoreError> {
    if person.is_empty() {
        return Ok(0);
    }
    let backend = tx.backend();
    let mut query = Query::new("SELECT id FROM events WHERE ")
        .push_tenant(tenant, "")
        .push(" AND data <> ");
    query = match backend {
        Backend::Postgres => query.push("CAST(").push_bind(TOMBSTONE).push(" AS JSONB)"),
        Backend::Sqlite => query.push_bind(TOMBSTONE),
    };
    query = query.push(" AND (");
    for column in ["data", "record", "actor"] {
        let text = format!("coalesce({}, '')", json_text(backend, column));
        query = person.push_mentions(query, &text).push(" OR ");
    }
    let ids: Vec<Uuid> = query.push("1 = 0)").fetch_column(&mut *tx).await?;
    let mut done = 0;
    for chunk in ids.chunks(CHUNK) {
        done += tombstone(tx, chunk, person).await?;
    }
    Ok(done)
}

async fn tombstone(tx: &mut Tx, ids: &[Uuid], person: &Person) -> Result<u64, StoreError> {
    if ids.is_empty() {
        return Ok(0);
    }
    let data = match tx.backend() {
        Backend::Postgres => "CAST($1 AS JSONB)",
        Backend::Sqlite => "$1",
    };
    let done = Query::new(format!(
        "UPDATE events SET data = {data}, record = NULL, \
         op = CASE WHEN op IS NULL THEN NULL ELSE 'delete' END WHERE id IN "
    ))
    .bind(TOMBSTONE)
    .push_bind_list(ids.iter().copied())
    .rows_affected(&mut *tx)
    .await?;
    scrub_rows(
        tx,
        "events",
        "id",
        "id",
        ids,
        &[Column::json("actor")],
        person,
    )
    .await?;
    webhooks::store::deliveries::erase_bodies(tx, ids).await?;
    Ok(done)
}
