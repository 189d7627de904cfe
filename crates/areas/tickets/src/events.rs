//! What each ticket change announces, inside the change's transaction:
//! events (and through them webhooks), the visitor's emails, and the live
//! events for the ticket channels, routed by the ticket as written (sent
//! once the transaction commits, see `Tx::announce`).

use std::collections::BTreeMap;

use serde_json::Value;

use super::model::{Change, Comment, Escalation, Ticket, TicketAssignment};
use super::payloads::{
    Changes, CommentCreated, EscalationSummary, FieldChanges, SlaEvent, SlaPayload, TicketCreated,
    TicketEscalated, TicketResolved, TicketUpdated,
};
use crate::actor::Actor;
use crate::auth::Tenant;
use crate::custom_fields::model::FieldChange;
use crate::db::Tx;
use crate::error::StoreError;
use crate::event_log::{Event, emit, emit_change, payload};
use crate::event_log::{RecordChange, RecordType, new_event, queue_written};
use crate::live::{LiveEvent, TicketTopic};
use crate::mail::{self, Email};
use crate::sla::clocks::store::Met;
use crate::tags::model::TagChange;
use crate::time::Timestamp;

/// `ticket.created` with the whole ticket, at `now`; the visitor's
/// confirmation email.
pub async fn created(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket: &Ticket,
    now: Timestamp,
) -> Result<(), StoreError> {
    let change = ticket_change(ticket)?;
    let event = emit_change(tx, tenant, &TicketCreated(ticket), Some(&change), now).await?;
    announce(tx, tenant, ticket, event);
    if let Some(to) = &ticket.visitor_email {
        mail::queue(tx, tenant, &creation_email(to, ticket)).await?;
    }
    Ok(())
}

/// `ticket.created` for a create written in one statement with its event
/// (`store::plain::insert`): the event, its `ticketNumber` still to be set
/// by that statement; made by `actor`, at `now`.
pub fn created_event(
    tenant: &Tenant,
    ticket: &Ticket,
    actor: Actor,
    now: Timestamp,
) -> Result<Event, StoreError> {
    new_event(tenant, &TicketCreated(ticket), actor, now)
}

/// After the statement of [`created_event`] wrote the event and answered
/// the ticket's number and the tenant's webhooks: the event's data made
/// again from the numbered ticket (what that statement wrote), its
/// deliveries and live announcement, and the visitor's email.
pub async fn created_written(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket: &Ticket,
    mut event: Event,
    webhooks: Vec<(uuid::Uuid, Vec<String>)>,
) -> Result<(), StoreError> {
    event.data = payload(&TicketCreated(ticket))?;
    queue_written(tx, tenant, &event, webhooks).await?;
    announce(tx, tenant, ticket, event);
    if let Some(to) = &ticket.visitor_email {
        mail::queue(tx, tenant, &creation_email(to, ticket)).await?;
    }
    Ok(())
}

/// What a resolution email may add: the signed link to rate the ticket.
#[derive(Debug, Clone, Copy, Default)]
pub struct Resolution<'a> {
    pub rating_link: Option<&'a str>,
}

/// What a `ticket.updated` reports beside the ticket.
pub struct Announced<'a> {
    pub changes: &'a [Change],
    pub tags: &'a TagChange,
    pub custom_fields: &'a BTreeMap<String, FieldChange>,
    /// Present when the assignee changed.
    pub assignment: Option<TicketAssignment>,
    /// The resolution email's additions, when the ticket became RESOLVED.
    pub resolution: Resolution<'a>,
}

/// `ticket.updated` with `changes` (only called when something changed;
/// `changes.tags` is `{added, removed}`, `changes.customFields` is
/// `{key: {from, to}}`) and, when the assignee changed, `assignment
/// {reason, teamId}`; then `ticket.resolved` and the visitor's email when
/// the status became RESOLVED; both at `now`.
pub async fn updated(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket: &Ticket,
    announced: Announced<'_>,
    now: Timestamp,
) -> Result<(), StoreError> {
    let Announced {
        changes,
        tags,
        custom_fields,
        assignment,
        resolution,
    } = announced;
    let data = TicketUpdated {
        ticket,
        changes: Changes {
            fields: FieldChanges(changes),
            tags,
            custom_fields,
        },
        assignment,
    };
    let change = ticket_change(ticket)?;
    let event = emit_change(tx, tenant, &data, Some(&change), now).await?;
    announce(tx, tenant, ticket, event);
    let resolved = changes.iter().any(Change::resolves);
    if resolved {
        let event = emit(tx, tenant, &TicketResolved(ticket), now).await?;
        announce(tx, tenant, ticket, event);
        if let Some(to) = &ticket.visitor_email {
            let rating_link = match resolution.rating_link {
                Some(link) if asks_automatically(tx, tenant, ticket).await? => Some(link),
                _ => None,
            };
            mail::queue(tx, tenant, &resolution_email(to, ticket, rating_link)).await?;
        }
    }
    Ok(())
}

/// `ticket.escalated` with the ticket after the escalation and
/// `escalation`, at `now`.
pub async fn escalated(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket: &Ticket,
    escalation: &EscalationSummary,
    now: Timestamp,
) -> Result<(), StoreError> {
    let data = TicketEscalated { ticket, escalation };
    let change = ticket_change(ticket)?;
    let event = emit_change(tx, tenant, &data, Some(&change), now).await?;
    announce(tx, tenant, ticket, event);
    Ok(())
}

/// `comment.created` with the comment (which carries `ticketId`), on the
/// channels of its ticket's entity (an internal note only to sockets that
/// read notes); at `now`.
pub async fn comment_created(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket: &Ticket,
    comment: &Comment,
    now: Timestamp,
) -> Result<(), StoreError> {
    let change = comment_change(comment)?;
    let event = emit_change(tx, tenant, &CommentCreated(comment), Some(&change), now).await?;
    let topic = TicketTopic {
        internal: comment.is_internal,
        ..topic(tenant, ticket)
    };
    tx.announce(LiveEvent { topic, event });
    Ok(())
}

/// `sla.warning`, `sla.breached` or `sla.fulfilled` with the whole ticket
/// and `slaEvent` `{metric, dueAt, at}`; on the channels of the ticket's
/// entity and of `team_entities`, those of its team (a team console
/// watches them; the ticket's own entity may be none of them). Stamped
/// `now`, when it is recorded; `slaEvent.at` is when the clock's moment
/// came.
pub async fn sla(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket: &Ticket,
    met: &Met,
    team_entities: &[uuid::Uuid],
    now: Timestamp,
) -> Result<(), StoreError> {
    // A warning or a breach changes nothing else of the ticket than its
    // `sla` (`warned`, `breaches`): its event is the change feed's entry
    // for that change, where the automations' triggers read it. A
    // fulfilment comes with the ticket change that met it, its entry.
    let change = ticket_change(ticket)?;
    let event = match SlaPayload::of(ticket, met) {
        SlaPayload::Warning(data) => emit_change(tx, tenant, &data, Some(&change), now).await?,
        SlaPayload::Breached(data) => emit_change(tx, tenant, &data, Some(&change), now).await?,
        SlaPayload::Fulfilled(data) => emit(tx, tenant, &data, now).await?,
    };
    let mut topic = topic(tenant, ticket);
    topic.team = team_entities
        .iter()
        .copied()
        .filter(|entity| *entity != ticket.entity_id)
        .collect();
    tx.announce(LiveEvent { topic, event });
    Ok(())
}

/// The ticket channels of `ticket`: its tenant's and its entity's.
fn topic(tenant: &Tenant, ticket: &Ticket) -> TicketTopic {
    TicketTopic {
        tenant: *tenant,
        entity: Some(ticket.entity_id),
        internal: false,
        team: Vec::new(),
    }
}

/// Stages `event` of `ticket` for its ticket channels.
fn announce(tx: &mut Tx, tenant: &Tenant, ticket: &Ticket, event: Event) {
    tx.announce(LiveEvent {
        topic: topic(tenant, ticket),
        event,
    });
}

/// `{metric, dueAt, at}` of an SLA event, for its timeline entry.
pub fn sla_json(met: &Met) -> Value {
    serde_json::json!(SlaEvent::of(met))
}

/// The change feed's entry for the ticket as it now is (its events carry
/// more than the record, e.g. `changes`, so the entry keeps its own copy).
pub fn ticket_change(ticket: &Ticket) -> Result<RecordChange, StoreError> {
    RecordChange::upsert(RecordType::Ticket, ticket.id, ticket)
}

/// The change feed's entry for the comment as it now is (as its list
/// shows it, `ticketId` the ticket it is on).
pub fn comment_change(comment: &Comment) -> Result<RecordChange, StoreError> {
    RecordChange::upsert(RecordType::Comment, comment.id, comment)
}

/// The `escalation` of the event and of the timeline entry.
pub fn escalation_summary(
    escalation: &Escalation,
    previous_assignee: Option<uuid::Uuid>,
) -> EscalationSummary {
    EscalationSummary::of(escalation, previous_assignee)
}

/// `{field: {from, to}}` for each change, for a timeline entry.
pub fn changes_json(changes: &[Change]) -> Value {
    serde_json::json!(FieldChanges(changes))
}

fn creation_email(to: &str, ticket: &Ticket) -> Email {
    let number = &ticket.ticket_number;
    Email {
        to: to.to_string(),
        subject: format!("[{number}] We received your request: {}", ticket.subject),
        text: format!(
            "Hello,\n\nThank you for contacting us. We received your request \"{subject}\" \
             and gave it the number {number}. Please quote this number in any message \
             about it.\n\nWe will get back to you as soon as possible.\n",
            subject = ticket.subject,
        ),
        html: None,
    }
}

/// Whether the ticket's entity asks for a rating when a ticket is resolved.
async fn asks_automatically(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket: &Ticket,
) -> Result<bool, StoreError> {
    let mode = crate::csat::store::mode_of(&mut *tx, tenant.company_id, ticket.entity_id).await?;
    Ok(mode == crate::csat::CsatMode::Auto)
}

fn resolution_email(to: &str, ticket: &Ticket, rating_link: Option<&str>) -> Email {
    let number = &ticket.ticket_number;
    Email {
        to: to.to_string(),
        subject: format!(
            "[{number}] Your request has been resolved: {}",
            ticket.subject
        ),
        text: format!(
            "Hello,\n\nYour request \"{subject}\" ({number}) has been resolved.\n\n\
             If something is still not right, reply quoting {number} and we will \
             look at it again.\n{rating}",
            subject = ticket.subject,
            rating = rating_link
                .map(|link| format!(
                    "\nHow satisfied are you with the help you got? Rate it here: {link}\n"
                ))
                .unwrap_or_default(),
        ),
        html: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TicketStatus;

    fn ticket() -> Ticket {
        Ticket {
            id: uuid::Uuid::now_v7(),
            ticket_number: "TKT-000042".into(),
            subject: "Printer on fire".into(),
            description: None,
            status: TicketStatus::Resolved,
            priority: crate::model::Priority::High,
            entity_id: uuid::Uuid::now_v7(),
            visitor_email: Some("v@example.com".into()),
            channel: crate::model::TicketChannel::Api,
            cc: Vec::new(),
            chat_session_id: None,
            visitor: None,
            contact_id: None,
            assigned_to_id: None,
            assigned_to: None,
            team_id: None,
            tags: Vec::new(),
            custom_fields: Default::default(),
            attachments: Vec::new(),
            resolved_at: None,
            created_at: Timestamp::now(),
            updated_at: Timestamp::now(),
            sla: None,
            version: 1,
            snoozed_until: None,
            merged_into: None,
            links: Vec::new(),
        }
    }

    #[test]
    fn emails_name_the_ticket_number() {
        let t = ticket();
        for email in [
            creation_email("v@example.com", &t),
            resolution_email("v@example.com", &t, None),
        ] {
            assert_eq!(email.to, "v@example.com");
            assert!(email.subject.contains("TKT-000042"));
            assert!(email.text.contains("TKT-000042"));
            assert!(email.text.contains("Printer on fire"));
        }
    }

    #[test]
    fn changes_are_keyed_by_field() {
        let user = uuid::Uuid::now_v7();
        let changes = [Change::Assignee {
            from: None,
            to: Some(user),
        }];
        assert_eq!(
            changes_json(&changes),
            serde_json::json!({"assignedToId": {"from": null, "to": user.to_string()}})
        );
    }
}
