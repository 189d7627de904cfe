//! Happenings: what changed in an event a trigger runs on, read from the
//! event log (`recorded`) or from a rule's own change (`diff`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use uuid::Uuid;

use super::{Happening, TriggerEvent};
use crate::actor::Actor;
use crate::model::{AuthorType, Ticket};

/// A happening of `event` on ticket `id` made by `actor` (an automation's
/// when it names one).
pub(super) fn happening(event: TriggerEvent, id: Uuid, actor: &Actor) -> Happening {
    Happening {
        event,
        ticket_id: id,
        chat_session_id: None,
        actor: Some(actor.clone()),
        changes: BTreeMap::new(),
        tags_added: Vec::new(),
        tags_removed: Vec::new(),
        comment: None,
        csat_score: None,
        sla_metric: None,
        by_rule: actor
            .id
            .filter(|_| actor.kind == crate::actor::ActorType::Automation),
    }
}

/// The `ticket.updated` of what changed from `before` to `after`, if
/// anything did.
pub fn diff(before: &Ticket, after: &Ticket, actor: &Actor) -> Option<Happening> {
    let mut changes = BTreeMap::new();
    let mut put = |name: String, from: Value, to: Value| {
        if from != to {
            changes.insert(name, (from, to));
        }
    };
    put("status".into(), json!(before.status), json!(after.status));
    put(
        "priority".into(),
        json!(before.priority),
        json!(after.priority),
    );
    put(
        "assignedToId".into(),
        json!(before.assigned_to_id),
        json!(after.assigned_to_id),
    );
    put("teamId".into(), json!(before.team_id), json!(after.team_id));
    let keys: BTreeSet<&String> = before
        .custom_fields
        .keys()
        .chain(after.custom_fields.keys())
        .collect();
    for key in keys {
        let value = |t: &Ticket| t.custom_fields.get(key).cloned().unwrap_or(Value::Null);
        put(format!("customFields.{key}"), value(before), value(after));
    }
    let tags_added: Vec<String> = after
        .tags
        .iter()
        .filter(|t| !before.tags.contains(t))
        .cloned()
        .collect();
    let tags_removed: Vec<String> = before
        .tags
        .iter()
        .filter(|t| !after.tags.contains(t))
        .cloned()
        .collect();
    if changes.is_empty() && tags_added.is_empty() && tags_removed.is_empty() {
        return None;
    }
    Some(Happening {
        changes,
        tags_added,
        tags_removed,
        ..happening(TriggerEvent::TicketUpdated, after.id, actor)
    })
}

/// The happening of a recorded ticket event (`name` with its `data`, as
/// the event log keeps it), made by `actor`; None for other events.
pub fn recorded(name: &str, data: &Value, actor: Option<Actor>) -> Option<Happening> {
    let event: TriggerEvent = name.parse().ok()?;
    let id_at = |key: &str| data.get(key)?.as_str()?.parse::<Uuid>().ok();
    let mut happening = Happening {
        event,
        ticket_id: Uuid::nil(),
        chat_session_id: None,
        by_rule: None,
        actor,
        changes: BTreeMap::new(),
        tags_added: Vec::new(),
        tags_removed: Vec::new(),
        comment: None,
        csat_score: None,
        sla_metric: None,
    };
    match event {
        TriggerEvent::TicketCreated => happening.ticket_id = id_at("id")?,
        // `sla.*` carry the ticket, as `ticket.created` does.
        TriggerEvent::SlaWarning | TriggerEvent::SlaBreached => {
            happening.ticket_id = id_at("id")?;
            let metric = data.get("slaEvent").and_then(|e| e.get("metric"));
            happening.sla_metric = metric.and_then(Value::as_str).map(String::from);
        }
        // A chat's events carry the session, as `GET /chat/sessions/{id}`.
        TriggerEvent::ChatClosed | TriggerEvent::ChatStarted => {
            happening.chat_session_id = Some(id_at("id")?)
        }
        TriggerEvent::EmailReceived => happening.ticket_id = id_at("ticketId")?,
        // A rating names its ticket, or else its chat.
        TriggerEvent::CsatSubmitted | TriggerEvent::CsatUpdated => {
            match id_at("ticketId") {
                Some(ticket) => happening.ticket_id = ticket,
                None => happening.chat_session_id = Some(id_at("chatSessionId")?),
            }
            happening.csat_score = data.get("score").and_then(Value::as_i64);
            // A change of rating names the score it replaced; a first
            // rating replaced none.
            let previous = data.get("previous").and_then(|p| p.get("score"));
            let score = data.get("score").cloned().unwrap_or(Value::Null);
            let previous = previous.cloned().unwrap_or(Value::Null);
            happening
                .changes
                .insert("csatScore".into(), (previous, score));
        }
        TriggerEvent::TicketUpdated => {
            happening.ticket_id = id_at("id")?;
            let changes = data.get("changes").and_then(Value::as_object);
            for (key, change) in changes.into_iter().flatten() {
                let texts = |v: Option<&Value>| -> Vec<String> {
                    v.and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(|t| t.as_str().map(String::from))
                                .collect()
                        })
                        .unwrap_or_default()
                };
                let from_to = |c: &Value| {
                    let side = |k: &str| c.get(k).cloned().unwrap_or(Value::Null);
                    (side("from"), side("to"))
                };
                match key.as_str() {
                    "tags" => {
                        happening.tags_added = texts(change.get("added"));
                        happening.tags_removed = texts(change.get("removed"));
                    }
                    "customFields" => {
                        for (field, c) in change.as_object().into_iter().flatten() {
                            happening
                                .changes
                                .insert(format!("customFields.{field}"), from_to(c));
                        }
                    }
                    _ => {
                        happening.changes.insert(key.clone(), from_to(change));
                    }
                }
            }
        }
        TriggerEvent::CommentCreated => {
            happening.ticket_id = id_at("ticketId")?;
            let author = data
                .get("authorType")?
                .as_str()?
                .parse::<AuthorType>()
                .ok()?;
            let internal = data
                .get("isInternal")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            happening.comment = Some((author, internal));
        }
    }
    Some(happening)
}
