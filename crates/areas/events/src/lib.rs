//! Records domain events (`ticket.created`, `user.created`, …). `emit`
//! writes the event inside the caller's transaction, so an event exists
//! exactly when the change that caused it commits, and hands the row's
//! INSERT to the webhooks store, which runs it with its lookup of the
//! subscribed hooks and queues their deliveries (and outbox jobs) in the
//! same transaction. The names and the event's shape live in
//! `event_catalogue`, below both this module and `webhooks`.

use serde::Serialize;

use store::{NewRows, Query, Tx};
use vocab::actor::Actor;
use vocab::error::StoreError;
use vocab::tenant::Tenant;
use vocab::time::{Timestamp, new_id};

mod change;
pub mod erase;

pub use change::{Op, RecordChange, RecordType};
pub use vocab::event_catalogue::{EVENT_NAMES, Event, EventName, EventPayload};

/// Records `data`, as the event its type names, for `tenant` in `tx`,
/// stamped `now` (the caller's clock) and made by the transaction's actor
/// (`Tx::actor`), and queues its webhook deliveries in
/// the same transaction. A payload that does not serialise is an error,
/// never an event with `data: null`.
pub async fn emit<P: EventPayload>(
    tx: &mut Tx,
    tenant: &Tenant,
    data: &P,
    now: Timestamp,
) -> Result<Event, StoreError> {
    emit_change(tx, tenant, data, None, now).await
}

/// `emit`, the event row also being the change feed's entry for `change`
/// (one row, one mechanism: the feed reads the events table).
pub async fn emit_change<P: EventPayload>(
    tx: &mut Tx,
    tenant: &Tenant,
    data: &P,
    change: Option<&RecordChange>,
    now: Timestamp,
) -> Result<Event, StoreError> {
    let event = new_event(tenant, data, tx.actor().clone(), now)?;
    record(tx, tenant, event, change).await
}

/// Records `data` as the event `name` whatever its shape: only for tests
/// that need an event no payload type describes (a delivery of arbitrary
/// data); the service records its events with [`emit`], whose payload
/// type names the event.
#[doc(hidden)]
pub async fn emit_json(
    tx: &mut Tx,
    tenant: &Tenant,
    name: EventName,
    data: &serde_json::Value,
    now: Timestamp,
) -> Result<Event, StoreError> {
    let event = Event {
        id: new_id(),
        name,
        tenant_company: tenant.company_id,
        timestamp: now,
        data: data.clone(),
        actor: tx.actor().clone(),
    };
    record(tx, tenant, event, None).await
}

/// Writes `event` and queues its webhook deliveries.
async fn record(
    tx: &mut Tx,
    tenant: &Tenant,
    event: Event,
    change: Option<&RecordChange>,
) -> Result<Event, StoreError> {
    let row = Row {
        id: event.id,
        name: event.name.as_str(),
        data: &event.data,
        created_at: event.timestamp,
        actor: &event.actor,
    };
    let written = insert_query(tx, tenant, row, change).await?;
    webhooks::dispatch::record_and_queue(tx, tenant, written, &event).await?;
    Ok(event)
}

/// The event `emit` would record at `now`, made by `actor`, not yet
/// written.
pub fn new_event<P: EventPayload>(
    tenant: &Tenant,
    data: &P,
    actor: Actor,
    now: Timestamp,
) -> Result<Event, StoreError> {
    Ok(Event {
        id: new_id(),
        name: P::NAME,
        tenant_company: tenant.company_id,
        timestamp: now,
        data: payload(data)?,
        actor,
    })
}

/// The events row of `event`, for one Postgres statement that writes a new
/// record and its event together (`NewRows::push_after`: its data and the
/// feed's snapshot then take the value only that statement knows, such as
/// the number Postgres reserved for the record). It is also the change
/// feed's entry for the new record (`change`, its snapshot the event's
/// data), numbered after commit as every Postgres entry is. The statement
/// must then read the tenant's webhooks (`webhooks::store::push_active_join`)
/// and hand them to [`queue_written`].
pub fn rows_after_record(tenant: &Tenant, event: &Event, change: &RecordChange) -> NewRows {
    let row = Row {
        id: event.id,
        name: event.name.as_str(),
        data: &event.data,
        created_at: event.timestamp,
        actor: &event.actor,
    };
    event_rows(tenant, row, Some(change), None)
}

/// After the statement of [`rows_after_record`] wrote `event` in `tx`
/// (`event.data` now as written): queues its deliveries to those of
/// `webhooks`, the tenant's active ones as that statement read them, that
/// subscribe to it.
pub async fn queue_written(
    tx: &mut Tx,
    tenant: &Tenant,
    event: &Event,
    webhooks: Vec<(uuid::Uuid, Vec<String>)>,
) -> Result<(), StoreError> {
    let subscribed = webhooks::store::subscribed(webhooks, event.name.as_str());
    webhooks::dispatch::queue(tx, tenant, &subscribed, event).await?;
    Ok(())
}

/// Records a change that has no webhook event (chat, knowledge base,
/// deletes) for the change feed only: an events row named
/// `<type>.<op>` that no webhook is sent for, stamped `now`, made by the
/// transaction's actor.
pub async fn record_change(
    tx: &mut Tx,
    tenant: &Tenant,
    change: &RecordChange,
    now: Timestamp,
) -> Result<(), StoreError> {
    let name = format!("{}.{}", change.record_type, change.op);
    let actor = tx.actor().clone();
    let row = Row {
        id: new_id(),
        name: &name,
        data: &serde_json::json!({ "id": change.id }),
        created_at: now,
        actor: &actor,
    };
    insert(tx, tenant, row, Some(change)).await
}

/// An events row's own columns.
struct Row<'a> {
    id: uuid::Uuid,
    name: &'a str,
    data: &'a serde_json::Value,
    created_at: Timestamp,
    actor: &'a Actor,
}

/// Writes the events row; a change also gets its feed number (see
/// `change::number_in_write`).
async fn insert(
    tx: &mut Tx,
    tenant: &Tenant,
    row: Row<'_>,
    change: Option<&RecordChange>,
) -> Result<(), StoreError> {
    insert_query(tx, tenant, row, change)
        .await?
        .execute(&mut *tx)
        .await
}

/// The INSERT of the events row, to run alone or with the statement that
/// needs it (the webhook lookup of `emit`).
async fn insert_query(
    tx: &mut Tx,
    tenant: &Tenant,
    row: Row<'_>,
    change: Option<&RecordChange>,
) -> Result<Query, StoreError> {
    let seq = match change {
        Some(_) => change::number_in_write(tx, tenant).await?,
        None => None,
    };
    Ok(event_rows(tenant, row, change, seq).insert())
}

/// The events row, described once for both ways of writing it: `row`, the
/// feed's entry `change` when it is one, and its feed number where entries
/// are numbered as they are written (`change::number_in_write`).
fn event_rows(
    tenant: &Tenant,
    row: Row<'_>,
    change: Option<&RecordChange>,
    seq: Option<i64>,
) -> NewRows {
    NewRows::of(
        "events",
        "id, company_id, mode, name, data, created_at, record_type, record_id, op, record, seq, \
         actor",
        [
            row.id.into(),
            tenant.company_id.into(),
            tenant.mode.as_str().into(),
            row.name.into(),
            row.data.clone().into(),
            row.created_at.into(),
            change.map(|c| c.record_type).into(),
            change.map(|c| c.id).into(),
            change.map(|c| c.op).into(),
            change.and_then(|c| c.record.clone()).into(),
            seq.into(),
            actor_json(row.actor).into(),
        ],
    )
}

/// `actor` as its column holds it (JSON; the shape is the API's).
pub fn actor_json(actor: &Actor) -> serde_json::Value {
    serde_json::json!({ "type": actor.kind, "id": actor.id, "name": actor.name })
}

/// `data` as an event payload; a value that does not serialise is a store
/// error (it would otherwise be sent as `null`).
pub fn payload(data: &impl Serialize) -> Result<serde_json::Value, StoreError> {
    serde_json::to_value(data).map_err(|e| StoreError::Database(sqlx::Error::Encode(Box::new(e))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use vocab::tenant::Mode;

    #[derive(Serialize)]
    struct Signup {
        name: &'static str,
    }

    impl EventPayload for Signup {
        const NAME: EventName = EventName::UserCreated;
    }

    #[test]
    fn an_event_is_named_by_its_payload_and_stamped_by_the_callers_clock() {
        let tenant = Tenant::new(uuid::Uuid::now_v7(), Mode::Test);
        // A clock moved a day ahead of the wall clock, as a test moves it.
        let now = Timestamp::now().plus(std::time::Duration::from_secs(86_400));
        let event =
            new_event(&tenant, &Signup { name: "Ada" }, Actor::system(), now).expect("event");
        assert_eq!(event.name, EventName::UserCreated);
        assert_eq!(event.timestamp, now);
        assert_eq!(event.data, serde_json::json!({"name": "Ada"}));
    }
}
