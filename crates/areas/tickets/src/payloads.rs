//! The data of the ticket, comment and SLA events (docs/api.md, "Events"),
//! one type per event: each is the ticket (or comment) as written plus what
//! only that event reports, and names its event, so `events::emit` records
//! it under that name and no other.

use std::collections::BTreeMap;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use super::model::{Change, Comment, Escalation, Ticket, TicketAssignment};
use crate::custom_fields::model::FieldChange;
use crate::event_log::{EventName, EventPayload};
use crate::sla::clocks::store::{Happening, Met};
use crate::tags::model::TagChange;
use crate::time::Timestamp;

/// `ticket.created`: the ticket.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct TicketCreated<'a>(pub &'a Ticket);

/// `ticket.resolved`: the ticket.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct TicketResolved<'a>(pub &'a Ticket);

/// `comment.created`: the comment, which carries its `ticketId`.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct CommentCreated<'a>(pub &'a Comment);

/// `ticket.updated`: the ticket, what changed and, when the assignee
/// changed, why.
#[derive(Debug, Serialize)]
pub struct TicketUpdated<'a> {
    #[serde(flatten)]
    pub ticket: &'a Ticket,
    pub changes: Changes<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assignment: Option<TicketAssignment>,
}

/// `changes` of `ticket.updated`: `{field: {from, to}}` for each changed
/// field, beside `tags: {added, removed}` and `customFields: {key: {from,
/// to}}` when those changed (absent when they did not).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Changes<'a> {
    #[serde(flatten)]
    pub fields: FieldChanges<'a>,
    #[serde(skip_serializing_if = "TagChange::is_empty")]
    pub tags: &'a TagChange,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub custom_fields: &'a BTreeMap<String, FieldChange>,
}

/// `{field: {from, to}}` for each change, the values as their texts.
#[derive(Debug, Clone, Copy)]
pub struct FieldChanges<'a>(pub &'a [Change]);

/// One changed field's values as texts.
#[derive(Debug, Serialize)]
struct FromTo {
    from: Option<String>,
    to: Option<String>,
}

impl Serialize for FieldChanges<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for change in self.0 {
            let (from, to) = change.texts();
            map.serialize_entry(change.field(), &FromTo { from, to })?;
        }
        map.end()
    }
}

/// `ticket.escalated`: the ticket after the escalation and the escalation.
#[derive(Debug, Serialize)]
pub struct TicketEscalated<'a> {
    #[serde(flatten)]
    pub ticket: &'a Ticket,
    pub escalation: &'a EscalationSummary,
}

/// The `escalation` of `ticket.escalated` and of its timeline entry.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EscalationSummary {
    pub reason: Option<String>,
    pub escalated_to_id: Option<uuid::Uuid>,
    pub previous_assignee_id: Option<uuid::Uuid>,
    pub automatic: bool,
    pub rule_id: Option<uuid::Uuid>,
    /// Only a rule's escalation to a team has one: absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escalated_to_team_id: Option<uuid::Uuid>,
}

impl EscalationSummary {
    pub fn of(escalation: &Escalation, previous_assignee: Option<uuid::Uuid>) -> Self {
        EscalationSummary {
            reason: escalation.reason.clone(),
            escalated_to_id: escalation.to_user,
            previous_assignee_id: previous_assignee,
            automatic: escalation.automatic,
            rule_id: escalation.rule_id,
            escalated_to_team_id: escalation.to_team,
        }
    }
}

/// What `sla.warning`, `sla.breached` and `sla.fulfilled` carry: the ticket
/// and what its clock did.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SlaReport<'a> {
    #[serde(flatten)]
    pub ticket: &'a Ticket,
    pub sla_event: SlaEvent,
}

/// `slaEvent` `{metric, dueAt, at}` of an SLA event and its timeline entry.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SlaEvent {
    pub metric: &'static str,
    pub due_at: Option<Timestamp>,
    pub at: Timestamp,
}

impl SlaEvent {
    pub fn of(met: &Met) -> Self {
        SlaEvent {
            metric: met.metric.api_name(),
            due_at: met.due_at,
            at: met.at,
        }
    }
}

/// `sla.warning`: a clock's warning time passed.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct SlaWarning<'a>(pub SlaReport<'a>);

/// `sla.breached`: a clock's due time passed unmet.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct SlaBreached<'a>(pub SlaReport<'a>);

/// `sla.fulfilled`: a metric was met.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct SlaFulfilled<'a>(pub SlaReport<'a>);

/// The SLA event of `happening`, as the payload of its own name.
pub enum SlaPayload<'a> {
    Warning(SlaWarning<'a>),
    Breached(SlaBreached<'a>),
    Fulfilled(SlaFulfilled<'a>),
}

impl<'a> SlaPayload<'a> {
    pub fn of(ticket: &'a Ticket, met: &Met) -> Self {
        let report = SlaReport {
            ticket,
            sla_event: SlaEvent::of(met),
        };
        match met.happening {
            Happening::Warning => SlaPayload::Warning(SlaWarning(report)),
            Happening::Breached => SlaPayload::Breached(SlaBreached(report)),
            Happening::Fulfilled => SlaPayload::Fulfilled(SlaFulfilled(report)),
        }
    }
}

macro_rules! names {
    ($($payload:ident => $name:ident),* $(,)?) => {
        $(impl EventPayload for $payload<'_> {
            const NAME: EventName = EventName::$name;
        })*
    };
}

names! {
    TicketCreated => TicketCreated,
    TicketUpdated => TicketUpdated,
    TicketResolved => TicketResolved,
    TicketEscalated => TicketEscalated,
    CommentCreated => CommentCreated,
    SlaWarning => SlaWarning,
    SlaBreached => SlaBreached,
    SlaFulfilled => SlaFulfilled,
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::model::{Priority, TicketStatus};
    use crate::sla::clocks::Metric;
    use crate::teams::model::Reason;

    fn timestamp(text: &str) -> Timestamp {
        Timestamp::from_datetime(text.parse().expect("timestamp"))
    }

    fn ticket() -> Ticket {
        let at = timestamp("2026-11-21T18:48:26.752Z");
        Ticket {
            id: uuid::Uuid::nil(),
            ticket_number: "TKT-000042".into(),
            subject: "Printer on fire".into(),
            description: None,
            status: TicketStatus::Resolved,
            priority: Priority::High,
            entity_id: uuid::Uuid::nil(),
            visitor_email: None,
            channel: crate::model::TicketChannel::Api,
            cc: Vec::new(),
            chat_session_id: None,
            visitor: None,
            contact_id: None,
            assigned_to_id: None,
            assigned_to: None,
            team_id: None,
            tags: vec!["billing".into()],
            custom_fields: Default::default(),
            attachments: Vec::new(),
            resolved_at: None,
            created_at: at,
            updated_at: at,
            sla: None,
            version: 1,
            snoozed_until: None,
            merged_into: None,
            links: Vec::new(),
        }
    }

    fn ticket_json() -> Value {
        serde_json::to_value(ticket()).expect("ticket")
    }

    /// The ticket's own JSON with `extra`'s keys added.
    fn ticket_with(extra: Value) -> Value {
        let mut data = ticket_json();
        if let (Value::Object(data), Value::Object(extra)) = (&mut data, extra) {
            data.extend(extra);
        }
        data
    }

    fn data(payload: &impl Serialize) -> Value {
        serde_json::to_value(payload).expect("payload")
    }

    #[test]
    fn created_and_resolved_are_the_ticket() {
        let ticket = ticket();
        assert_eq!(data(&TicketCreated(&ticket)), ticket_json());
        assert_eq!(data(&TicketResolved(&ticket)), ticket_json());
        assert_eq!(ticket_json()["ticketNumber"], "TKT-000042");
    }

    #[test]
    fn updated_adds_changes_keyed_by_field_and_leaves_out_what_did_not_change() {
        let ticket = ticket();
        let changes = [Change::Priority {
            from: Priority::Low,
            to: Priority::High,
        }];
        let payload = TicketUpdated {
            ticket: &ticket,
            changes: Changes {
                fields: FieldChanges(&changes),
                tags: &TagChange::default(),
                custom_fields: &BTreeMap::new(),
            },
            assignment: None,
        };
        assert_eq!(
            data(&payload),
            ticket_with(json!({"changes": {"priority": {"from": "LOW", "to": "HIGH"}}}))
        );
    }

    #[test]
    fn updated_reports_tags_custom_fields_and_assignment_when_they_changed() {
        let ticket = ticket();
        let (user, team) = (uuid::Uuid::now_v7(), uuid::Uuid::now_v7());
        let changes = [Change::Assignee {
            from: None,
            to: Some(user),
        }];
        let tags = TagChange {
            added: vec!["billing".into()],
            removed: Vec::new(),
        };
        let fields = BTreeMap::from([(
            "plan".to_string(),
            FieldChange {
                from: None,
                to: Some(json!("pro")),
            },
        )]);
        let payload = TicketUpdated {
            ticket: &ticket,
            changes: Changes {
                fields: FieldChanges(&changes),
                tags: &tags,
                custom_fields: &fields,
            },
            assignment: Some(TicketAssignment {
                reason: Reason::Routing,
                team_id: Some(team),
            }),
        };
        assert_eq!(
            data(&payload),
            ticket_with(json!({
                "changes": {
                    "assignedToId": {"from": null, "to": user.to_string()},
                    "tags": {"added": ["billing"], "removed": []},
                    "customFields": {"plan": {"from": null, "to": "pro"}},
                },
                "assignment": {"reason": "routing", "teamId": team.to_string()},
            }))
        );
    }

    #[test]
    fn escalated_adds_the_escalation_with_its_team_only_when_it_has_one() {
        let ticket = ticket();
        let (user, rule) = (uuid::Uuid::now_v7(), uuid::Uuid::now_v7());
        let escalation = Escalation {
            to_user: Some(user),
            to_team: None,
            reason: Some("VIP".into()),
            automatic: true,
            rule_id: Some(rule),
        };
        let summary = EscalationSummary::of(&escalation, None);
        let payload = TicketEscalated {
            ticket: &ticket,
            escalation: &summary,
        };
        assert_eq!(
            data(&payload),
            ticket_with(json!({"escalation": {
                "reason": "VIP",
                "escalatedToId": user.to_string(),
                "previousAssigneeId": null,
                "automatic": true,
                "ruleId": rule.to_string(),
            }}))
        );
        let team = uuid::Uuid::now_v7();
        let to_team = Escalation {
            to_team: Some(team),
            ..escalation
        };
        assert_eq!(
            data(&EscalationSummary::of(&to_team, None))["escalatedToTeamId"],
            json!(team.to_string())
        );
    }

    #[test]
    fn sla_events_add_what_the_clock_did_under_their_own_names() {
        let ticket = ticket();
        let at = timestamp("2026-11-21T19:00:00Z");
        let met = |happening| Met {
            happening,
            metric: Metric::FirstResponse,
            due_at: Some(at),
            at,
        };
        let expected = ticket_with(json!({"slaEvent": {
            "metric": "firstResponse",
            "dueAt": "2026-11-21T19:00:00.000Z",
            "at": "2026-11-21T19:00:00.000Z",
        }}));
        let named = |payload: SlaPayload| match payload {
            SlaPayload::Warning(p) => (SlaWarning::NAME, data(&p)),
            SlaPayload::Breached(p) => (SlaBreached::NAME, data(&p)),
            SlaPayload::Fulfilled(p) => (SlaFulfilled::NAME, data(&p)),
        };
        for (happening, name) in [
            (Happening::Warning, EventName::SlaWarning),
            (Happening::Breached, EventName::SlaBreached),
            (Happening::Fulfilled, EventName::SlaFulfilled),
        ] {
            assert_eq!(
                named(SlaPayload::of(&ticket, &met(happening))),
                (name, expected.clone())
            );
        }
    }
}
