//! A new ticket's number: reserved before its transaction on Postgres,
//! taken inside it on SQLite.

use crate::auth::Tenant;
use crate::db::{Backend, Db, Query, Tx};
use crate::error::StoreError;

/// Where a new ticket's number comes from.
pub(super) enum Numbering {
    /// Taken before the ticket's transaction, left in `RESERVED_NUMBER`.
    Reserved,
    /// To be taken inside the transaction (`next_number`).
    InTransaction,
}

/// The number `begin_numbered` reserved, formatted as `ticket_number` does
/// (six digits at least).
pub(super) const RESERVED_NUMBER: &str =
    "COALESCE($5, current_setting('supportdesk.ticket_number'))";

/// Begins a ticket's transaction. On Postgres the tenant's next number is
/// taken first, in the same round trip (`Db::begin_after_committing`) but
/// in a transaction of its own (docs/api.md, tickets, "Numbers"): the
/// counter row is locked for that one statement, so concurrent creates of
/// a company do not wait for each other's commits, and a create that then
/// fails leaves a gap. That statement commits without waiting for its WAL
/// flush: the ticket's commit comes later in the WAL and flushes it, so a
/// crash can only lose a number no committed ticket holds.
///
/// On SQLite, which has one writer at a time anyway, the number is taken
/// inside the ticket's transaction and a rolled-back create gives it back.
///
/// `alone`: the create's one statement will commit by itself, so the
/// reservation is not followed by `BEGIN` (`Db::autocommit_after`).
pub(super) async fn begin_numbered(
    db: &Db,
    tenant: &Tenant,
    alone: bool,
) -> Result<(Tx, Numbering), StoreError> {
    if db.backend() != Backend::Postgres {
        return Ok((db.begin().await?, Numbering::InTransaction));
    }
    // Literal values: the simple protocol that carries several statements
    // has no parameters. A company id and a mode cannot hold a quote.
    let reservation = format!(
        "WITH reserved AS (INSERT INTO counters (company_id, mode, name, value) \
         VALUES ('{company}', '{mode}', 'ticket', 1) \
         ON CONFLICT (company_id, mode, name) DO UPDATE SET value = counters.value + 1 \
         RETURNING value) \
         SELECT set_config('supportdesk.ticket_number', \
         'TKT-' || lpad(value::text, greatest(6, length(value::text)), '0'), false), \
         set_config('synchronous_commit', 'off', true) FROM reserved",
        company = tenant.company_id,
        mode = tenant.mode.as_str(),
    );
    let tx = match alone {
        true => db.autocommit_after(&reservation).await?,
        false => db.begin_after_committing(&reservation).await?,
    };
    Ok((tx, Numbering::Reserved))
}

/// The next value of the tenant's ticket sequence, in `tx` (SQLite). The
/// counter row stays locked until `tx` ends, so creates take turns: no
/// duplicates, and a rollback gives the number back.
pub(super) async fn next_number(tx: &mut Tx, tenant: &Tenant) -> Result<i64, StoreError> {
    Query::new(
        "INSERT INTO counters (company_id, mode, name, value) VALUES ($1, $2, 'ticket', 1) \
         ON CONFLICT (company_id, mode, name) DO UPDATE SET value = counters.value + 1 \
         RETURNING value",
    )
    .bind_tenant(tenant)
    .fetch_scalar(tx)
    .await
}
