//! A new ticket as written, without reading it back: what a create that
//! writes only the row and its tags answers.

use sqlx::types::Json;
use uuid::Uuid;

use super::TicketRow;
use super::ticket_person::ChatVisitor;
use crate::custom_fields::model::FieldValues;
use crate::model::{NewTicket, Ticket, TicketStatus};
use crate::time::Timestamp;

/// A new ticket as written (the row and its `tags`, nothing else), mapped
/// as a read maps the row.
pub(super) fn written(
    id: Uuid,
    ticket_number: String,
    new: NewTicket,
    visitor_email: Option<String>,
    from_chat: Option<ChatVisitor>,
    tags: &[String],
    now: Timestamp,
) -> Ticket {
    let (visitor_external_id, visitor_name, visitor_verified) = match from_chat {
        Some(chat) => (
            chat.visitor_external_id,
            Some(chat.visitor_name),
            chat.visitor_verified,
        ),
        None => (None, None, false),
    };
    TicketRow {
        id,
        ticket_number,
        subject: new.subject,
        description: new.description,
        status: TicketStatus::Open,
        priority: new.priority,
        entity_id: new.entity_id,
        visitor_email,
        chat_session_id: new.chat_session_id,
        visitor_external_id,
        visitor_name,
        visitor_verified,
        // The caller sets it: the row as written holds it.
        contact_id: None,
        assigned_to_id: None,
        assignee_name: None,
        assignee_email: None,
        team_id: new.team_id,
        custom_fields: Json(FieldValues::default()),
        resolved_at: None,
        created_at: now,
        updated_at: now,
        sla_policy_id: None,
        version: 1,
        tag_list: (!tags.is_empty()).then(|| tags.join(" ")),
        has_attachments: false,
        has_sla_clocks: false,
        snoozed_until: None,
        merged_into: None,
        has_links: false,
        channel: new.channel,
        email_cc: None,
        list_total: None,
    }
    .into_ticket()
}
