//! Turns a recorded event into one delivery per subscribed webhook, inside
//! the transaction of the change: no committed change without its
//! deliveries, no delivery for a rolled-back change. Each delivery comes
//! with the outbox job that sends it (`deliveries::insert`).

use serde::Serialize;
use uuid::Uuid;

use super::store::{self, deliveries};
use crate::actor::Actor;
use crate::auth::{Mode, Tenant};
use crate::db::{Db, Query, Tx};
use crate::error::StoreError;
use crate::event_catalogue::Event;
use crate::time::{Timestamp, new_id};

/// The name of the ping sent by `POST /company/webhooks/{id}/test`.
pub const TEST_EVENT: &str = "webhook.test";

/// The request body of every delivery, serialised once and stored so that
/// every attempt sends (and signs) the same bytes.
#[derive(Serialize)]
struct Body<'a> {
    id: Uuid,
    event: &'a str,
    timestamp: Timestamp,
    data: &'a serde_json::Value,
    mode: &'static str,
    /// Who made the change (one field for every event, beside `data`);
    /// null only in a replay of an event recorded before events named
    /// their actor.
    actor: Option<&'a Actor>,
}

/// The exact JSON body for an event made by `actor` (None: an event
/// recorded before events named their actor).
pub fn event_body(
    id: Uuid,
    event: &str,
    timestamp: Timestamp,
    data: &serde_json::Value,
    mode: Mode,
    actor: Option<&Actor>,
) -> String {
    let body = Body {
        id,
        event,
        timestamp,
        data,
        mode: mode.as_api(),
        actor,
    };
    serde_json::to_string(&body).unwrap_or_else(|_| unreachable!("a JSON value serialises"))
}

/// Runs `written` (the INSERT of `event`'s row) and queues the deliveries
/// of `event` inside `tx`: one per active webhook of the same company and
/// mode subscribed to it.
pub async fn record_and_queue(
    tx: &mut Tx,
    tenant: &Tenant,
    written: Query,
    event: &Event,
) -> Result<(), StoreError> {
    let webhooks = store::subscribed_after(tx, tenant, written, event.name.as_str()).await?;
    queue(tx, tenant, &webhooks, event).await
}

/// Queues a delivery of `event` (recorded in `tx`) to each of `webhooks`.
pub async fn queue(
    tx: &mut Tx,
    tenant: &Tenant,
    webhooks: &[Uuid],
    event: &Event,
) -> Result<(), StoreError> {
    if webhooks.is_empty() {
        return Ok(());
    }
    let name = event.name.as_str();
    let body = event_body(
        event.id,
        name,
        event.timestamp,
        &event.data,
        tenant.mode,
        Some(&event.actor),
    );
    for &webhook_id in webhooks {
        let new = deliveries::NewDelivery {
            webhook_id,
            event_id: event.id,
            event: name,
            body: &body,
            redelivery_of: None,
        };
        deliveries::insert(tx, tenant, new).await?;
    }
    Ok(())
}

/// Queues a `webhook.test` ping to webhook `id` (subscribed or not), its
/// event stamped `now`.
pub async fn queue_test(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    now: Timestamp,
) -> Result<Uuid, StoreError> {
    let webhook = store::find(db, tenant, id).await?;
    let data = serde_json::json!({
        "webhookId": webhook.id,
        "message": "This is a test delivery from Support Desk.",
    });
    let event_id = new_id();
    let mut tx = db.begin().await?;
    let body = event_body(
        event_id,
        TEST_EVENT,
        now,
        &data,
        tenant.mode,
        Some(tx.actor()),
    );
    let new = deliveries::NewDelivery {
        webhook_id: webhook.id,
        event_id,
        event: TEST_EVENT,
        body: &body,
        redelivery_of: None,
    };
    let delivery = deliveries::insert(&mut tx, tenant, new).await?;
    tx.commit().await?;
    Ok(delivery)
}

/// Queues a new delivery that repeats `delivery_id` (same event, same body
/// bytes, a new delivery id so receivers do not discard it as a duplicate).
pub async fn redeliver(
    db: &Db,
    tenant: &Tenant,
    webhook_id: Uuid,
    delivery_id: Uuid,
) -> Result<Uuid, StoreError> {
    store::find(db, tenant, webhook_id).await?;
    let (event_id, event, body) = deliveries::source(db, tenant, webhook_id, delivery_id).await?;
    let mut tx = db.begin().await?;
    let new = deliveries::NewDelivery {
        webhook_id,
        event_id,
        event: &event,
        body: &body,
        redelivery_of: Some(delivery_id),
    };
    let id = deliveries::insert(&mut tx, tenant, new).await?;
    tx.commit().await?;
    Ok(id)
}
