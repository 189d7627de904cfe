//! The ticket channels: `tickets:<entityId>` and `tickets` (the whole
//! company and mode). The ticket stores stage each ticket event in the
//! change's transaction with its route (`vocab::live::TicketTopic`, taken
//! from the ticket as written); once the transaction commits, its `Db`
//! hands them to [`TicketPublisher`], which publishes each on the bus like
//! chat, so every node's subscribers get it, and reads no row. A frame's
//! `data` is the event's webhook body, byte for byte the same fields.
//! Internal notes go only to sockets whose key reads them (`tickets:write`,
//! as comment search decides), which subscribe to their own hub channel.
//! Replay after `since` reads the events table.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use sqlx::types::Json;
use uuid::Uuid;

use futures::future::BoxFuture;

use super::Realtime;
use super::bus::BusMessage;
use super::hub::{Frame, Hub, TicketReads};
use super::protocol::{self, HubChannel, Topic};
use super::store;
use crate::actor::Actor;
use crate::auth::{Mode, Tenant};
use crate::db::{Db, Publish};
use crate::error::StoreError;
use crate::event_catalogue::EventName;
use crate::live::{LiveEvent, TicketTopic};
use crate::time::Timestamp;

/// The events the ticket channels carry.
pub const CARRIED: [EventName; 8] = [
    EventName::TicketCreated,
    EventName::TicketUpdated,
    EventName::TicketResolved,
    EventName::TicketEscalated,
    EventName::CommentCreated,
    EventName::SlaWarning,
    EventName::SlaBreached,
    EventName::SlaFulfilled,
];

/// The wire names of `CARRIED`, as the events table spells them.
pub fn carried_names() -> Vec<&'static str> {
    CARRIED.iter().map(|event| event.as_str()).collect()
}

/// One ticket event as the events table holds it (a replay).
#[derive(Debug, Clone)]
pub struct TicketEvent {
    pub id: Uuid,
    pub name: String,
    pub timestamp: Timestamp,
    pub data: Value,
    pub actor: Option<Actor>,
}

impl From<store::EventRow> for TicketEvent {
    fn from(row: store::EventRow) -> Self {
        TicketEvent {
            id: row.id,
            name: row.name,
            timestamp: row.created_at,
            data: row.data.0,
            actor: row.actor.map(|Json(actor)| actor),
        }
    }
}

impl TicketEvent {
    /// An internal note, which only keys that read notes may hear of.
    pub fn is_internal(&self) -> bool {
        self.name == EventName::CommentCreated.as_str()
            && self.data.get("isInternal").and_then(Value::as_bool) == Some(true)
    }

    /// The entity the event belongs to: the ticket's, read from the event
    /// or (for comments) from the ticket, remembered in `tickets`. None when
    /// the ticket no longer exists.
    pub async fn entity(
        &self,
        db: &Db,
        tenant: &Tenant,
        tickets: &mut HashMap<Uuid, Uuid>,
    ) -> Result<Option<Uuid>, StoreError> {
        let id_at = |field: &str| {
            self.data
                .get(field)
                .and_then(Value::as_str)
                .and_then(|raw| Uuid::parse_str(raw).ok())
        };
        if self.name != EventName::CommentCreated.as_str() {
            return Ok(id_at("entityId"));
        }
        let Some(ticket) = id_at("ticketId") else {
            return Ok(None);
        };
        if let Some(entity) = tickets.get(&ticket) {
            return Ok(Some(*entity));
        }
        match store::ticket_entity(db, tenant, ticket).await {
            Ok(entity) => {
                tickets.insert(ticket, entity);
                Ok(Some(entity))
            }
            Err(StoreError::NotFound) => Ok(None),
            Err(other) => Err(other),
        }
    }

    /// The frame on `channel`: `{type, channel, data}` with the webhook body
    /// as `data`.
    pub fn frame(&self, channel: &str, mode: Mode) -> String {
        let body = crate::webhooks::dispatch::event_body(
            self.id,
            &self.name,
            self.timestamp,
            &self.data,
            mode,
            self.actor.as_ref(),
        );
        let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        protocol::event(&self.name, channel, None, &body)
    }
}

/// The name clients know a ticket hub channel by.
pub fn channel_name(entity: Option<Uuid>) -> String {
    protocol::Channel::Tickets(entity).name()
}

/// The one publisher of ticket events: the transactions of the service's
/// `Db` hand it the events they staged once they have committed
/// (`Db::with_publisher`). One bus message per event, its topic the
/// event's [`TicketTopic`] and its payload the webhook body, which each
/// node fans out to its own subscribers (one publish per event keeps a
/// change's cost on the bus, and its wait when Redis is slow, that of one
/// chat message). A publish that fails loses the live frame only: the
/// event stays recorded, and a client that reconnects with `since` gets
/// it.
pub struct TicketPublisher {
    realtime: Arc<Realtime>,
}

impl TicketPublisher {
    pub fn new(realtime: Arc<Realtime>) -> TicketPublisher {
        TicketPublisher { realtime }
    }
}

impl Publish for TicketPublisher {
    fn publish(&self, events: Vec<LiveEvent>) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            for LiveEvent { topic, event } in events {
                let body = crate::webhooks::dispatch::event_body(
                    event.id,
                    event.name.as_str(),
                    event.timestamp,
                    &event.data,
                    topic.tenant.mode,
                    Some(&event.actor),
                );
                self.realtime
                    .bus
                    .publish_to(topic.tenant.company_id, &topic.encode(), body)
                    .await;
            }
        })
    }
}

/// Hands a ticket event from the bus to this node's subscribers of
/// `tickets` and `tickets:<entity>` (those that read notes, and the others
/// unless it is an internal note). None for other bus traffic.
pub fn dispatch(hub: &Hub, message: &BusMessage) -> Option<usize> {
    let TicketTopic {
        tenant,
        entity,
        internal,
        team,
    } = TicketTopic::decode(&message.topic)?;
    let audiences: &[bool] = if internal { &[true] } else { &[true, false] };
    let mut delivered = 0;
    let mut body: Option<Value> = None;
    let channels = std::iter::once(None)
        .chain(entity.map(Some))
        .chain(team.into_iter().map(Some));
    for entity in channels {
        for &notes in audiences {
            let topic = Topic::new(tenant, HubChannel::Tickets { entity, notes });
            if hub.subscribers(&topic) == 0 {
                continue;
            }
            // Parsed once, and only when a socket here listens.
            let body = match &body {
                Some(body) => body,
                None => body.insert(serde_json::from_str(&message.payload).ok()?),
            };
            let name = body
                .get("event")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let id = body
                .get("id")
                .and_then(Value::as_str)
                .and_then(|id| Uuid::parse_str(id).ok());
            let text = protocol::event(name, &channel_name(entity), None, body);
            delivered += hub.dispatch(Arc::new(Frame {
                topic,
                message_id: id,
                needs: match internal {
                    true => TicketReads::Notes,
                    false => TicketReads::Public,
                },
                text: text.into(),
            }));
        }
    }
    Some(delivered)
}
