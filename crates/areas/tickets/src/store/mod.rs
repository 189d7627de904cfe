//! SQL for tickets, their comments and their timeline. Every change runs in
//! one transaction with its timeline entry, its events and its emails, so a
//! committed change always has them and a rolled-back one never does.
//!
//! Here is the ticket row and how it maps to a `Ticket`, which every part
//! reads; the rest is split by what it does: `create`, `read` (one ticket),
//! `list` (pages and totals), `update`, `tags`, `escalate`, `assign`,
//! `delete`, `sla` (what a change does to the SLA clocks), `comments` and
//! `activities` (the timeline).

mod activities;
mod assign;
mod comments;
mod contacts;
mod create;
mod delete;
mod delivery;
pub mod erase;
mod escalate;
pub mod grouping;
mod link_rows;
mod links;
mod list;
pub mod mentions;
mod merge;
mod numbering;
mod plain;
mod queued;
mod read;
mod search;
mod sla;
mod snooze;
mod split;
pub mod subscribers;
mod tags;
mod ticket_person;
mod update;
mod written;

pub use activities::{changes_since, list_activities};
pub use assign::assign_by_routing;
pub use comments::{add_comment, list_comments};
pub use contacts::{ContactOf, TicketSummary, move_contact, of_contacts};
pub use create::{create, create_in};
pub use delete::{Deleted, Deletion, delete, delete_batch};
pub use delivery::{ReplySent, cancel_comment, deliver_due};
pub use escalate::{escalate, escalate_in};
pub use links::{add_link, open_children, remove_link};
pub use list::{count, list, list_sql};
pub use merge::{merge, undo_merge};
pub use queued::JobsOf;
pub use read::{find, find_by_number_in};
pub use sla::record_sla;
pub use snooze::{snooze, snooze_in, wake_due};
pub use split::{comment_to_split, split};
pub use tags::{edit_tags, edit_tags_at};
pub use update::{update, update_with_rating_link};
// The steps a macro's application (and an automation, and an incoming
// email) runs in its own transaction.
pub(crate) use activities::add_entry;
pub use comments::add_comment_in;
pub use read::load;
pub use update::update_in;
pub(crate) use update::{check_version, lock};

use sqlx::types::Json;
use uuid::Uuid;

use crate::auth::Tenant;
use crate::custom_fields::model::FieldValues;
use crate::custom_fields::store as field_store;
use crate::db::Query;
use crate::model::{Priority, Ticket, TicketChannel, TicketStatus, UserRef};
use crate::tags::store as tag_store;
use crate::time::Timestamp;

/// A ticket with its assignee and tags (joined by spaces: read them with
/// `tag_store::split_joined`), whether it has attachments or SLA clocks,
/// and the addresses its email thread copies (the email component's row,
/// joined on its key: a ticket without a thread costs one probe of that
/// key, no subquery), in one statement (no query per row): a ticket without
/// attachments or clocks is read in one round trip.
const TICKET_SELECT: &str = "SELECT t.id, t.ticket_number, t.subject, t.description, t.status, \
     t.priority, t.entity_id, t.visitor_email, t.chat_session_id, t.visitor_external_id, \
     t.visitor_name, t.visitor_verified, t.contact_id, t.assigned_to_id, u.name AS assignee_name, \
     u.email AS assignee_email, t.team_id, t.custom_fields, t.resolved_at, t.created_at, \
     t.updated_at, t.sla_policy_id, t.version, \
     (SELECT string_agg(g.tag, ' ') FROM ticket_tags g WHERE g.ticket_id = t.id) AS tag_list, \
     EXISTS (SELECT 1 FROM attachments a WHERE a.ticket_id = t.id AND a.comment_id IS NULL) \
     AS has_attachments, \
     EXISTS (SELECT 1 FROM ticket_sla c WHERE c.ticket_id = t.id) AS has_sla_clocks, \
     t.snoozed_until, t.merged_into, \
     (EXISTS (SELECT 1 FROM ticket_links l WHERE l.from_id = t.id) \
      OR EXISTS (SELECT 1 FROM ticket_links l WHERE l.to_id = t.id)) AS has_links, \
     t.channel, e.cc AS email_cc \
     FROM tickets t LEFT JOIN users u ON u.id = t.assigned_to_id \
     LEFT JOIN email_tickets e ON e.ticket_id = t.id";

/// `SELECT … WHERE t.id = $1 AND` the tenant's, in the tenant's teams when
/// it is limited to them: every read, lock and check of one ticket goes
/// through here, so a ticket outside them is NotFound as another tenant's.
fn by_id(select: &str, tenant: &Tenant, id: Uuid) -> Query {
    Query::new(select)
        .push(" WHERE t.id = ")
        .push_bind(id)
        .push(" AND ")
        .push_tenant_in_teams(tenant, "t", "team_id")
}

#[derive(sqlx::FromRow)]
struct TicketRow {
    id: Uuid,
    ticket_number: String,
    subject: String,
    description: Option<String>,
    status: TicketStatus,
    priority: Priority,
    entity_id: Uuid,
    visitor_email: Option<String>,
    chat_session_id: Option<Uuid>,
    visitor_external_id: Option<String>,
    visitor_name: Option<String>,
    visitor_verified: bool,
    contact_id: Option<Uuid>,
    assigned_to_id: Option<Uuid>,
    assignee_name: Option<String>,
    assignee_email: Option<String>,
    team_id: Option<Uuid>,
    custom_fields: Json<FieldValues>,
    resolved_at: Option<Timestamp>,
    created_at: Timestamp,
    updated_at: Timestamp,
    sla_policy_id: Option<Uuid>,
    version: i64,
    tag_list: Option<String>,
    has_attachments: bool,
    has_sla_clocks: bool,
    snoozed_until: Option<Timestamp>,
    merged_into: Option<Uuid>,
    has_links: bool,
    channel: TicketChannel,
    /// The email thread's copied addresses (null: not an email ticket).
    email_cc: Option<Json<Vec<String>>>,
    /// The list's total, on a page that counts it in the same statement.
    #[sqlx(default)]
    list_total: Option<i64>,
}

impl TicketRow {
    /// The ticket, without its attachments and SLA (read apart, when the
    /// row says there are some).
    fn into_ticket(self) -> Ticket {
        let row = self;
        let tags = tag_store::split_joined(row.tag_list.as_deref());
        let assigned_to = user_ref(row.assigned_to_id, row.assignee_name, row.assignee_email);
        // A ticket is from a visitor when it was made from a chat, which
        // always names its visitor.
        let visitor = row.visitor_name.map(|name| vocab::visitor::Visitor {
            external_id: row.visitor_external_id,
            email: row.visitor_email.clone(),
            name,
            verified: row.visitor_verified,
        });
        Ticket {
            id: row.id,
            ticket_number: row.ticket_number,
            subject: row.subject,
            description: row.description,
            status: row.status,
            priority: row.priority,
            entity_id: row.entity_id,
            visitor_email: row.visitor_email,
            channel: row.channel,
            cc: row.email_cc.map(|cc| cc.0).unwrap_or_default(),
            chat_session_id: row.chat_session_id,
            visitor,
            contact_id: row.contact_id,
            assigned_to_id: row.assigned_to_id,
            assigned_to,
            team_id: row.team_id,
            tags,
            custom_fields: field_store::sorted(row.custom_fields.0),
            attachments: Vec::new(),
            resolved_at: row.resolved_at,
            created_at: row.created_at,
            updated_at: row.updated_at,
            sla: None,
            version: row.version,
            snoozed_until: row.snoozed_until,
            merged_into: row.merged_into,
            links: Vec::new(),
        }
    }
}

fn user_ref(id: Option<Uuid>, name: Option<String>, email: Option<String>) -> Option<UserRef> {
    match (id, name, email) {
        (Some(id), Some(name), Some(email)) => Some(UserRef { id, name, email }),
        _ => None,
    }
}
