//! Domain events (`ticket.created`, `user.created`, …). `emit` writes the
//! event inside the caller's transaction, so an event exists exactly when
//! the change that caused it commits; webhook deliveries are derived from it.

use serde::Serialize;
use uuid::Uuid;

use crate::auth::Tenant;
use crate::db::Tx;
use crate::error::StoreError;
use crate::on_tx;
use crate::time::{Timestamp, new_id};

/// Every event name a webhook can subscribe to.
pub const EVENT_NAMES: &[&str] = &[
    "ticket.created",
    "ticket.updated",
    "ticket.resolved",
    "ticket.escalated",
    "comment.created",
    "user.created",
];

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    pub id: Uuid,
    pub name: String,
    pub tenant_company: Uuid,
    pub timestamp: Timestamp,
    pub data: serde_json::Value,
}

/// Records `name` with `data` for `tenant` in `tx`, and queues its webhook
/// deliveries in the same transaction.
pub async fn emit(
    tx: &mut Tx,
    tenant: &Tenant,
    name: &str,
    data: serde_json::Value,
) -> Result<Event, StoreError> {
    let event = Event {
        id: new_id(),
        name: name.to_string(),
        tenant_company: tenant.company_id,
        timestamp: Timestamp::now(),
        data,
    };
    let json = sqlx::types::Json(&event.data);
    on_tx!(tx, c => sqlx::query(
        "INSERT INTO events (id, company_id, mode, name, data, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(event.id)
        .bind(tenant.company_id)
        .bind(tenant.mode.as_str())
        .bind(&event.name)
        .bind(json)
        .bind(event.timestamp)
        .execute(c)
        .await?
        .rows_affected());
    crate::webhooks::dispatch::queue_deliveries(tx, tenant, &event).await?;
    Ok(event)
}
