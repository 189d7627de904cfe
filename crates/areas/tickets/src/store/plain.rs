//! A plain create on Postgres: the ticket row and the SLA clocks its policy
//! starts (known without reading anything), its number reserved before the
//! write (`begin_numbered`), written with its timeline entry and its
//! `ticket.created` event in one statement of data-modifying CTEs.
//!
//! When nothing else must commit with that statement (no webhook to queue a
//! delivery for, no email, no request bookkeeping), it commits by itself:
//! two round trips in all (the reservation, the statement) instead of four
//! (`BEGIN` sent with the reservation, the statement, `COMMIT`). Whether a
//! webhook subscribes is only known for sure inside the statement, so the
//! statement writes nothing when one does, and the create then begins a
//! transaction and writes as usual, deliveries included.

use std::sync::LazyLock;

use sqlx::types::Json;
use uuid::Uuid;

use super::activities::{self, NewActivity};
use super::subscribers::Subscribers;
use crate::auth::Tenant;
use crate::db::{After, NewRows, Query, Table, Tx};
use crate::error::StoreError;
use crate::event_catalogue::{Event, EventName};
use crate::events;
use crate::model::Ticket;
use crate::sla::clocks::Clock;
use crate::sla::clocks::store as sla_store;
use crate::time::Timestamp;
use crate::webhooks::store as webhook_store;

/// A row of the statement in a transaction: the number the ticket got, one
/// of the tenant's active webhooks (none: NULLs) and whether the commit
/// hook's write held.
#[derive(sqlx::FromRow)]
struct Written {
    ticket_number: String,
    webhook_id: Option<Uuid>,
    webhook_events: Option<Json<Vec<String>>>,
    hook_held: bool,
}

/// The one row of the statement that commits by itself: the number the
/// ticket got (none: nothing was written) and whether a webhook
/// subscribes to `ticket.created` (then nothing was written).
#[derive(sqlx::FromRow)]
struct Alone {
    ticket_number: Option<String>,
    subscribed: bool,
}

/// What the statement writes beside the row.
pub(super) struct Alongside<'a> {
    pub clocks: &'a [Clock],
    pub entry: NewActivity,
    /// The outbox jobs the create queues (`JobsOf`).
    pub jobs: Option<NewRows>,
}

/// Writes `ticket` (as written but for its number) with `insert`, the
/// ticket row's `INSERT … SELECT … WHERE …` (no `RETURNING`; it inserts
/// nothing when the entity is not the company's, and binds the tenant as
/// `$2` and `$3`). On a `tx` of `Db::autocommit_after`, first as one
/// statement that commits by itself; in a transaction, or when a webhook
/// subscribes, inside the transaction. Answers the ticket with its number.
pub(super) async fn insert(
    tx: &mut Tx,
    subscribers: &Subscribers,
    tenant: &Tenant,
    insert: Query,
    also: Alongside<'_>,
    mut ticket: Ticket,
    now: Timestamp,
) -> Result<Ticket, StoreError> {
    let event = events::created_event(tenant, &ticket, tx.actor().clone(), now)?;
    if !tx.in_transaction() {
        let statement =
            writes(insert.clone(), tenant, &also, &event, &ticket, true)?.push(&format!(
                " SELECT inserted.ticket_number, {} AS subscribed \
                 FROM (VALUES (1)) AS one (x) LEFT JOIN inserted ON TRUE",
                *SUBSCRIBED_TO_CREATED
            ));
        let alone: Alone = statement.fetch_one(&mut *tx).await?;
        match (alone.ticket_number, alone.subscribed) {
            (Some(number), _) => {
                ticket.ticket_number = number;
                events::created_written(tx, tenant, &ticket, event, Vec::new()).await?;
                return Ok(ticket);
            }
            (None, false) => return Err(Table::Entities.invalid_reference("entityId")),
            (None, true) => {
                subscribers.saw(tenant, true);
                tx.begin_now().await?;
            }
        }
    }
    let statement = writes(insert, tenant, &also, &event, &ticket, false)?;
    // The request's own bookkeeping (an Idempotency-Key marked applied)
    // travels with it too.
    let (statement, hooked) = tx.push_commit_hook(statement);
    let hook_held = match hooked {
        true => "EXISTS (SELECT 1 FROM commit_hook)",
        false => "TRUE",
    };
    let statement = statement.push(&format!(
        " SELECT inserted.ticket_number, webhook.id AS webhook_id, \
         webhook.events AS webhook_events, {hook_held} AS hook_held FROM inserted"
    ));
    let rows: Vec<Written> = webhook_store::push_active_join(statement, tenant, "webhook")
        .fetch_all(&mut *tx)
        .await?;
    let Some(first) = rows.first() else {
        return Err(Table::Entities.invalid_reference("entityId"));
    };
    if hooked {
        tx.commit_hook_written(first.hook_held)?;
    }
    ticket.ticket_number = first.ticket_number.clone();
    let webhooks: Vec<(Uuid, Vec<String>)> = rows
        .into_iter()
        .filter_map(|row| Some((row.webhook_id?, row.webhook_events?.0)))
        .collect();
    let created = EventName::TicketCreated.as_str();
    subscribers.saw(
        tenant,
        webhooks
            .iter()
            .any(|(_, events)| events.iter().any(|e| e == created)),
    );
    events::created_written(tx, tenant, &ticket, event, webhooks).await?;
    Ok(ticket)
}

/// `WITH inserted AS (insert …), clocks AS (…), activity AS (…), written
/// AS (…), queued AS (…)`: the row (not when `unsubscribed_only` and a webhook subscribes
/// to `ticket.created`), its clocks, its timeline entry, its event and its
/// jobs, each described by its own area as it is when written alone
/// (`NewRows`), the entry's and the event's `ticketNumber` taken from the
/// row as inserted.
fn writes(
    insert: Query,
    tenant: &Tenant,
    also: &Alongside<'_>,
    event: &Event,
    ticket: &Ticket,
    unsubscribed_only: bool,
) -> Result<Query, StoreError> {
    let insert = match unsubscribed_only {
        true => insert.push(&format!(" AND NOT {}", *SUBSCRIBED_TO_CREATED)),
        false => insert,
    };
    let after = After {
        alias: "inserted",
        key: "ticketNumber",
        column: "ticket_number",
    };
    let mut statement = insert
        .prefixed("WITH inserted AS (")
        .push(" RETURNING ticket_number)");
    if let Some(clocks) = sla_store::new_clock_rows(tenant, also.clocks) {
        statement = clocks.push_after(statement, "clocks", after);
    }
    let entry = activities::activity_rows(
        tenant,
        ticket.id,
        also.entry.clone(),
        &event.actor,
        ticket.created_at,
    );
    let statement = entry.push_after(statement, "activity", after);
    let change = events::ticket_change(ticket)?;
    let event_row = crate::event_log::rows_after_record(tenant, event, &change);
    let statement = event_row.push_after(statement, "written", after);
    Ok(match also.jobs.clone() {
        Some(jobs) => jobs.push_after(statement, "queued", after),
        None => statement,
    })
}

/// Whether the tenant (`$2`, `$3`) has an active webhook subscribed to
/// `ticket.created`, in SQL; written once, read twice per create.
static SUBSCRIBED_TO_CREATED: LazyLock<String> = LazyLock::new(|| {
    format!(
        "EXISTS (SELECT 1 FROM webhooks w WHERE w.company_id = $2 AND w.mode = $3 \
         AND w.is_active AND w.events @> '[\"{}\"]')",
        EventName::TicketCreated.as_str()
    )
});
