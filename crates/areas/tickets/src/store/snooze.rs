//! SQL for snoozing: a ticket snoozed until a time, woken then by the wake
//! pass (`wake_due`), early by its customer's reply (`wake_on_reply`), or
//! by hand. Each wake is a conditional UPDATE of the snooze, so a ticket
//! wakes once however many nodes run the pass.

use serde_json::json;
use uuid::Uuid;

use super::activities::{NewActivity, add_activity};
use super::read::load;
use crate::attachments::links::Signer;
use crate::auth::{Mode, Tenant};
use crate::db::{Db, PassLock, Query, Tx};
use crate::error::StoreError;
use crate::event_log::record_change;
use crate::model::{ActivityKind, Ticket};
use crate::relation_events::{TicketUnsnoozed, WakeReason, announce};
use crate::time::Timestamp;

/// At most this many tickets per batch of the wake pass.
const BATCH: i64 = 500;

/// One node at a time runs the wake pass (Postgres' advisory lock key).
const PASS_LOCK_KEY: i64 = 0x5344_534e_4f4f_5a45;

/// Snoozes ticket `id` until `until` (None wakes it by hand), with a
/// `snoozed` or `unsnoozed` timeline entry; waking by hand emits
/// `ticket.unsnoozed` (`reason: agent`), a snooze the change feed's entry.
/// Setting what is already set changes nothing. `expected`: the version
/// the caller saw (`If-Match`); another one refuses the snooze
/// (`StoreError::VersionConflict`), checked under the ticket's row lock.
pub async fn snooze(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    until: Option<Timestamp>,
    expected: Option<i64>,
    now: Timestamp,
    signer: &Signer,
) -> Result<Ticket, StoreError> {
    let mut tx = db.begin().await?;
    super::update::lock(&mut tx, tenant, id).await?;
    super::update::check_version(&mut tx, tenant, id, expected).await?;
    let ticket = snooze_in(&mut tx, tenant, id, until, now, signer).await?;
    tx.commit().await?;
    Ok(ticket)
}

/// `snooze` in the caller's transaction, which holds the ticket's row lock
/// (an automation's snooze, beside its other changes).
pub async fn snooze_in(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    until: Option<Timestamp>,
    now: Timestamp,
    signer: &Signer,
) -> Result<Ticket, StoreError> {
    let current = load(&mut *tx, tenant, id, signer).await?;
    if current.snoozed_until == until {
        return Ok(current);
    }
    let tenant = &tenant.whole();
    Query::new(
        "UPDATE tickets SET version = version + 1, snoozed_until = $4, updated_at = $5 WHERE id = $1 \
         AND company_id = $2 AND mode = $3",
    )
    .bind(id)
    .bind_tenant(tenant)
    .bind(until)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    match until {
        Some(until) => {
            let entry = NewActivity {
                details: Some(json!({"snoozedUntil": until})),
                ..NewActivity::new(ActivityKind::Snoozed)
            };
            add_activity(tx, tenant, id, entry, now).await?;
            let ticket = load(&mut *tx, tenant, id, signer).await?;
            let change = crate::events::ticket_change(&ticket)?;
            record_change(tx, tenant, &change, now).await?;
            Ok(ticket)
        }
        None => woken(tx, tenant, id, WakeReason::Agent, now, signer).await,
    }
}

/// The timeline entry and `ticket.unsnoozed` of a ticket just woken; the
/// ticket as it now is.
async fn woken(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    reason: WakeReason,
    now: Timestamp,
    signer: &Signer,
) -> Result<Ticket, StoreError> {
    let entry = NewActivity {
        details: Some(json!({"reason": reason})),
        ..NewActivity::new(ActivityKind::Unsnoozed)
    };
    add_activity(tx, tenant, id, entry, now).await?;
    let ticket = load(&mut *tx, tenant, id, signer).await?;
    let data = TicketUnsnoozed {
        ticket: &ticket,
        reason,
    };
    announce(tx, tenant, &ticket, &data, now).await?;
    Ok(ticket)
}

/// In a customer's reply's transaction: wakes the ticket if it is snoozed
/// (before its time), with its entry and event.
pub(super) async fn wake_on_reply(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    now: Timestamp,
    signer: &Signer,
) -> Result<(), StoreError> {
    let woke: Option<(Uuid,)> = Query::new(
        "UPDATE tickets SET version = version + 1, snoozed_until = NULL WHERE id = $1 AND company_id = $2 \
         AND mode = $3 AND snoozed_until IS NOT NULL RETURNING id",
    )
    .bind(id)
    .bind_tenant(tenant)
    .fetch_optional(&mut *tx)
    .await?;
    if woke.is_some() {
        woken(tx, tenant, id, WakeReason::CustomerReply, now, signer).await?;
    }
    Ok(())
}

#[derive(sqlx::FromRow)]
struct DueTicket {
    id: Uuid,
    company_id: Uuid,
    mode: Mode,
}

/// Wakes every ticket whose snooze is due at `now`, each in its own
/// transaction with its entry and `ticket.unsnoozed` (`reason: due`).
/// Reads only the index of snoozed tickets' due times. Returns how many it
/// woke; 0 when another node holds the pass.
pub async fn wake_due(db: &Db, now: Timestamp, signer: &Signer) -> Result<usize, StoreError> {
    let Some(lock) = PassLock::try_take(db, PASS_LOCK_KEY, "snooze").await? else {
        return Ok(0);
    };
    let mut woke = 0;
    loop {
        let due: Vec<DueTicket> = Query::new(
            "SELECT id, company_id, mode FROM tickets WHERE snoozed_until IS NOT NULL \
             AND snoozed_until <= $1 ORDER BY snoozed_until LIMIT $2",
        )
        .bind(now)
        .bind(BATCH)
        .fetch_all(db)
        .await?;
        let batch = due.len();
        for ticket in due {
            match wake(db, &ticket, now, signer).await {
                Ok(true) => woke += 1,
                Ok(false) => {}
                Err(err) => {
                    lock.release().await;
                    return Err(err);
                }
            }
        }
        if batch < BATCH as usize {
            break;
        }
    }
    lock.release().await;
    Ok(woke)
}

/// Claims one due wake and records it; false when it was no longer due
/// (woken, moved or cleared meanwhile).
async fn wake(
    db: &Db,
    ticket: &DueTicket,
    now: Timestamp,
    signer: &Signer,
) -> Result<bool, StoreError> {
    let mut tx = db.begin().await?;
    let claimed: Option<(Uuid,)> = Query::new(
        "UPDATE tickets SET version = version + 1, snoozed_until = NULL WHERE id = $1 AND snoozed_until IS NOT NULL \
         AND snoozed_until <= $2 RETURNING id",
    )
    .bind(ticket.id)
    .bind(now)
    .fetch_optional(&mut tx)
    .await?;
    if claimed.is_none() {
        return Ok(false);
    }
    let tenant = Tenant::new(ticket.company_id, ticket.mode);
    woken(&mut tx, &tenant, ticket.id, WakeReason::Due, now, signer).await?;
    tx.commit().await?;
    Ok(true)
}
