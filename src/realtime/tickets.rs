//! The ticket channels: `tickets:<entityId>` and `tickets` (the whole
//! company and mode). Ticket events are announced once their change has
//! committed: the API's request layer and the rules worker collect the
//! events their work recorded (`events::live`), keep those whose row exists
//! and publish each on the bus like chat, so every node's subscribers get
//! it. A frame's `data` is the event's webhook body, byte for byte the
//! same fields. Internal notes go only to sockets whose key reads them
//! (`tickets:write`, as comment search decides), which subscribe to their
//! own hub channel. Replay after `since` reads the events table.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use uuid::Uuid;

use super::bus::BusMessage;
use super::hub::{Frame, Hub};
use super::protocol::{self, HubChannel, Topic};
use super::store;
use crate::auth::{Mode, Tenant};
use crate::db::Db;
use crate::error::StoreError;
use crate::event_catalogue::EventName;
use crate::events::live::{self, Staged};
use crate::state::AppState;
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

fn carried(name: &str) -> bool {
    CARRIED.iter().any(|event| event.as_str() == name)
}

/// The wire names of `CARRIED`, as the events table spells them.
pub fn carried_names() -> Vec<&'static str> {
    CARRIED.iter().map(|event| event.as_str()).collect()
}

/// One ticket event, live or replayed.
#[derive(Debug, Clone)]
pub struct TicketEvent {
    pub id: Uuid,
    pub name: String,
    pub timestamp: Timestamp,
    pub data: Value,
}

impl From<store::EventRow> for TicketEvent {
    fn from(row: store::EventRow) -> Self {
        TicketEvent {
            id: row.id,
            name: row.name,
            timestamp: row.created_at,
            data: row.data.0,
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
        );
        let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        protocol::event(&self.name, channel, None, &body)
    }
}

/// The name clients know a ticket hub channel by.
pub fn channel_name(entity: Option<Uuid>) -> String {
    protocol::Channel::Tickets(entity).name()
}

/// Runs `work` (a request, a worker's pass) and then announces the ticket
/// events it committed.
pub async fn announcing<F: Future>(state: &AppState, work: F) -> F::Output {
    let (output, staged) = live::collect(work).await;
    if staged.iter().any(|s| carried(s.event.name.as_str())) {
        // Boxed: its reads and publishes would otherwise size the future of
        // every request (this wraps them all), which axum copies into a
        // box of its own per request, events or not.
        Box::pin(announce(state, staged)).await;
    }
    output
}

/// Publishes `staged` (events of committed transactions only) on the
/// ticket channels. A failed read loses the live frames only: the events
/// stay recorded, and a client that reconnects with `since` gets them.
async fn announce(state: &AppState, staged: Vec<Staged>) {
    let mut tickets = HashMap::new();
    let mut teams = HashMap::new();
    for Staged { tenant, event } in staged {
        if !carried(event.name.as_str()) {
            continue;
        }
        let event = TicketEvent {
            id: event.id,
            name: event.name.as_str().to_string(),
            timestamp: event.timestamp,
            data: event.data,
        };
        let entity = match event.entity(&state.db, &tenant, &mut tickets).await {
            Ok(entity) => entity,
            Err(error) => {
                tracing::warn!(%error, event = %event.id, "ticket event not announced");
                continue;
            }
        };
        let team = match event.team_entities(&state.db, &mut teams).await {
            Ok(entities) => entities
                .into_iter()
                .filter(|e| Some(*e) != entity)
                .collect(),
            Err(error) => {
                tracing::warn!(%error, event = %event.id, "sla event not sent to its team");
                Vec::new()
            }
        };
        publish(state, &tenant, entity, &team, &event).await;
    }
}

impl TicketEvent {
    /// The SLA events of a ticket in a team go to the team's channels too,
    /// the ticket channels of the team's entities (a team console watches
    /// those; the ticket's own entity may be none of them): their
    /// entities, read once per team and announcement. Empty for other
    /// events and tickets without a team.
    async fn team_entities(
        &self,
        db: &Db,
        teams: &mut HashMap<Uuid, Vec<Uuid>>,
    ) -> Result<Vec<Uuid>, StoreError> {
        let sla = [
            EventName::SlaWarning,
            EventName::SlaBreached,
            EventName::SlaFulfilled,
        ];
        if !sla.iter().any(|name| name.as_str() == self.name) {
            return Ok(Vec::new());
        }
        let team = self
            .data
            .get("teamId")
            .and_then(Value::as_str)
            .and_then(|raw| Uuid::parse_str(raw).ok());
        let Some(team) = team else {
            return Ok(Vec::new());
        };
        if let Some(entities) = teams.get(&team) {
            return Ok(entities.clone());
        }
        let entities = crate::teams::store::entities_of(db, team).await?;
        teams.insert(team, entities.clone());
        Ok(entities)
    }
}

/// Bus topics of ticket events start with this: one bus message per event,
/// `tk:<company>:<mode>:<entity or ->:<internal 0|1>[:<team entities>]`
/// with the webhook body, which each node fans out to its own subscribers
/// of `tickets`, `tickets:<entity>` and `tickets:<e>` for each of the
/// comma-separated team entities (one publish per event keeps a change's cost on the
/// bus, and its wait when Redis is slow, that of one chat message).
const BUS_PREFIX: &str = "tk:";

/// Publishes `event` once on the bus, for the ticket channels of `entity`
/// and of `team` (further entities).
async fn publish(
    state: &AppState,
    tenant: &Tenant,
    entity: Option<Uuid>,
    team: &[Uuid],
    event: &TicketEvent,
) {
    let entity = entity.map_or_else(|| "-".to_string(), |id| id.to_string());
    let mut topic = format!(
        "{BUS_PREFIX}{}:{}:{entity}:{}",
        tenant.company_id,
        tenant.mode.as_str(),
        u8::from(event.is_internal())
    );
    if !team.is_empty() {
        let team: Vec<String> = team.iter().map(Uuid::to_string).collect();
        topic = format!("{topic}:{}", team.join(","));
    }
    let body = crate::webhooks::dispatch::event_body(
        event.id,
        &event.name,
        event.timestamp,
        &event.data,
        tenant.mode,
    );
    state
        .realtime
        .bus
        .publish_to(tenant.company_id, &topic, body)
        .await;
}

/// Hands a ticket event from the bus to this node's subscribers of
/// `tickets` and `tickets:<entity>` (those that read notes, and the others
/// unless it is an internal note). None for other bus traffic.
pub fn dispatch(hub: &Hub, message: &BusMessage) -> Option<usize> {
    let rest = message.topic.strip_prefix(BUS_PREFIX)?;
    let mut parts = rest.split(':');
    let company_id = Uuid::parse_str(parts.next()?).ok()?;
    let mode = Mode::parse(parts.next()?)?;
    let entity = match parts.next()? {
        "-" => None,
        id => Some(Uuid::parse_str(id).ok()?),
    };
    let internal = parts.next()? == "1";
    let mut team = Vec::new();
    if let Some(ids) = parts.next() {
        for id in ids.split(',') {
            team.push(Some(Uuid::parse_str(id).ok()?));
        }
    }
    let tenant = Tenant { company_id, mode };
    let audiences: &[bool] = if internal { &[true] } else { &[true, false] };
    let mut delivered = 0;
    let mut body: Option<Value> = None;
    let channels = std::iter::once(None).chain(entity.map(Some)).chain(team);
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
                text: text.into(),
            }));
        }
    }
    Some(delivered)
}
