//! Records domain events (`ticket.created`, `user.created`, …). `emit`
//! writes the event inside the caller's transaction, so an event exists
//! exactly when the change that caused it commits, and asks the webhooks
//! store for the deliveries (and their outbox jobs) of the subscribed hooks
//! in the same transaction. The names and the event's shape live in
//! `event_catalogue`, below both this module and `webhooks`.

use serde::Serialize;

use crate::auth::Tenant;
use crate::db::{Query, Tx};
use crate::error::StoreError;
use crate::time::{Timestamp, new_id};

pub use crate::event_catalogue::{EVENT_NAMES, Event, EventName};

/// Records `name` with `data` for `tenant` in `tx`, and queues its webhook
/// deliveries in the same transaction. A payload that does not serialise is
/// an error, never an event with `data: null`.
pub async fn emit(
    tx: &mut Tx,
    tenant: &Tenant,
    name: EventName,
    data: &impl Serialize,
) -> Result<Event, StoreError> {
    let event = Event {
        id: new_id(),
        name,
        tenant_company: tenant.company_id,
        timestamp: Timestamp::now(),
        data: payload(data)?,
    };
    // Nothing reads the `events` table yet; it is kept because it is to
    // become the public change feed.
    Query::new(
        "INSERT INTO events (id, company_id, mode, name, data, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(event.id)
    .bind_tenant(tenant)
    .bind(event.name.as_str())
    .bind(&event.data)
    .bind(event.timestamp)
    .execute(&mut *tx)
    .await?;
    crate::webhooks::dispatch::queue_deliveries(tx, tenant, &event).await?;
    Ok(event)
}

/// `data` as an event payload; a value that does not serialise is a store
/// error (it would otherwise be sent as `null`).
pub fn payload(data: &impl Serialize) -> Result<serde_json::Value, StoreError> {
    serde_json::to_value(data).map_err(|e| StoreError::Database(sqlx::Error::Encode(Box::new(e))))
}
