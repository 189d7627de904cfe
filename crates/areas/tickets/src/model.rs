//! What a ticket, a comment and a timeline entry look like in the API, and
//! the pure rules about them (numbers, what a PATCH really changes).

use serde::Serialize;
use uuid::Uuid;

use crate::actor::Actor;
use crate::attachments::AttachmentRef;
use crate::auth::{Scope, ScopeSet};
use crate::custom_fields::model::{FieldFilter, FieldPatch, FieldValues};
use crate::search::TextQuery;
use crate::sla::clocks::TicketSla;
use crate::tags::model::TagFilter;
use crate::time::Timestamp;

pub use vocab::ticket::{AuthorType, Priority, TicketStatus};

crate::text_enum! {
    /// The kind of a timeline entry.
    pub enum ActivityKind {
        Created = "created",
        StatusChanged = "status_changed",
        PriorityChanged = "priority_changed",
        AssigneeChanged = "assignee_changed",
        Escalated = "escalated",
        Commented = "commented",
        TagsChanged = "tags_changed",
        CustomFieldsChanged = "custom_fields_changed",
        SlaWarning = "sla_warning",
        SlaBreached = "sla_breached",
        SlaFulfilled = "sla_fulfilled",
        TeamChanged = "team_changed",
        Linked = "linked",
        Unlinked = "unlinked",
        Snoozed = "snoozed",
        Unsnoozed = "unsnoozed",
        Merged = "merged",
        MergeUndone = "merge_undone",
        Split = "split",
        /// A chain of automations stopped at its depth limit.
        AutomationStopped = "automation_stopped",
    }
}

crate::text_enum! {
    /// Where a ticket was opened: by the API (an agent, an integration),
    /// by an email to a channel, or from a chat. (The widget opens no
    /// ticket of its own: a visitor's conversation becomes one from its
    /// chat.)
    pub enum TicketChannel {
        Api = "api",
        Email = "email",
        Chat = "chat",
    }
}

/// The headers of the email a comment was made from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, utoipa::ToSchema)]
#[schema(as = CommentEmail)]
#[serde(rename_all = "camelCase")]
pub struct CommentEmail {
    /// Without angle brackets.
    pub message_id: String,
    pub from: String,
    pub to: Vec<String>,
    pub cc: Vec<String>,
}

pub const DESCRIPTION_MAX: usize = 50_000;
pub const COMMENT_MAX: usize = 50_000;
pub const REASON_MAX: usize = 1_000;

/// `TKT-000001`: the per-company-and-mode sequence value, six digits wide.
pub fn ticket_number(seq: i64) -> String {
    format!("TKT-{seq:06}")
}

/// A user as other records show them (assignee, comment author).
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct UserRef {
    pub id: Uuid,
    pub name: String,
    pub email: String,
}

/// The whole ticket: every response and every ticket event carries it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Ticket {
    pub id: Uuid,
    pub ticket_number: String,
    pub subject: String,
    pub description: Option<String>,
    #[schema(schema_with = crate::openapi::schema::ticket_status)]
    pub status: TicketStatus,
    #[schema(schema_with = crate::openapi::schema::ticket_priority)]
    pub priority: Priority,
    pub entity_id: Uuid,
    pub visitor_email: Option<String>,
    /// Where it was opened: `api`, `email` or `chat`.
    #[schema(value_type = String, example = "email")]
    pub channel: TicketChannel,
    /// The addresses copied on its email thread (empty for a ticket that
    /// does not talk by email): its replies copy them.
    pub cc: Vec<String>,
    /// The widget chat the ticket was made from (null: none).
    pub chat_session_id: Option<Uuid>,
    /// `{externalId, email, name, verified}` of the chat's visitor when the
    /// ticket was made from a chat; null when it is not from a visitor.
    pub visitor: Option<vocab::visitor::Visitor>,
    /// The contact the ticket is from, matched from its `visitorEmail` or
    /// its chat's visitor when it was created (null: none).
    pub contact_id: Option<Uuid>,
    pub assigned_to_id: Option<Uuid>,
    /// `{id, name, email}` of the assignee, null when unassigned.
    pub assigned_to: Option<UserRef>,
    /// The team the ticket belongs to (its routing may assign it).
    pub team_id: Option<Uuid>,
    /// Sorted.
    pub tags: Vec<String>,
    /// Values of the company's custom fields, by key (absent when unset).
    #[schema(value_type = Object)]
    pub custom_fields: FieldValues,
    /// Files attached when the ticket was created (comments carry their own).
    pub attachments: Vec<AttachmentRef>,
    pub resolved_at: Option<Timestamp>,
    pub created_at: Timestamp,
    /// Last change or comment.
    pub updated_at: Timestamp,
    /// The SLA policy's due times, breaches and fulfilments; null when no
    /// policy applies.
    pub sla: Option<TicketSla>,
    /// Grows by one with every change (a comment included); the ticket's
    /// answers carry it as `ETag: "<version>"`, and a write sent with
    /// `If-Match` on another version is refused (412).
    pub version: i64,
    /// Until when the ticket is snoozed (null: awake): it wakes then, or
    /// at its customer's next reply, whichever comes first.
    pub snoozed_until: Option<Timestamp>,
    /// The ticket this one was merged into (null: not merged).
    pub merged_into: Option<Uuid>,
    /// Its links to other tickets, each as this ticket sees it.
    pub links: Vec<crate::relations::TicketLink>,
}

#[derive(Debug, Clone)]
pub struct NewTicket {
    pub subject: String,
    pub description: Option<String>,
    pub priority: Priority,
    pub entity_id: Uuid,
    pub visitor_email: Option<String>,
    /// Where the ticket is opened.
    pub channel: TicketChannel,
    /// A team of the tenant.
    pub team_id: Option<Uuid>,
    /// A chat session of the tenant the ticket is made from: the ticket
    /// takes its visitor (and its email, if proven and none is given).
    pub chat_session_id: Option<Uuid>,
    /// A sorted set.
    pub tags: Vec<String>,
    /// Checked against the definitions; required ones present.
    pub custom_fields: FieldPatch,
    /// Unattached uploads of the tenant to attach.
    pub attachment_ids: Vec<Uuid>,
}

/// GET /tickets filters; `None` (an empty tag filter) means "any".
#[derive(Debug, Clone, Default)]
pub struct TicketFilter {
    /// `ticketNumber`: only the ticket with this sequence value (the
    /// number `TKT-000042` is 42).
    pub number: Option<i64>,
    pub entity_id: Option<Uuid>,
    pub status: Option<TicketStatus>,
    pub priority: Option<Priority>,
    pub assigned_to_id: Option<Uuid>,
    /// `assigned`: only tickets with (true) or without (false) an assignee.
    pub assigned: Option<bool>,
    pub team_id: Option<Uuid>,
    pub tags: TagFilter,
    /// `?q=`: ranked full-text search (`None` when absent or blank).
    pub search: Option<TicketSearch>,
    pub custom_fields: FieldFilter,
    /// `slaBreached`: tickets with (true) or without (false) a breach.
    pub sla_breached: Option<bool>,
    /// `slaDueBefore`: tickets with a running SLA clock due before then.
    pub sla_due_before: Option<Timestamp>,
    /// `order=sla_due`: the soonest running SLA due time first (tickets
    /// without one last), then newest.
    pub by_sla_due: bool,
    /// `snoozed`: only tickets snoozed (true) or awake (false) at the time
    /// given.
    pub snoozed: Option<SnoozedAt>,
}

/// The `snoozed` filter: whether the tickets are snoozed at `now`.
#[derive(Clone, Copy)]
pub struct SnoozedAt {
    pub snoozed: bool,
    pub now: Timestamp,
}

/// Without `now`: a list's cursor names its filters by this text, and the
/// next page of the same list is read at another moment.
impl std::fmt::Debug for SnoozedAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SnoozedAt({})", self.snoozed)
    }
}

impl TicketFilter {
    /// Whether any filter but the search is given (a search alone reads
    /// only the search documents, which carry the tenant).
    pub fn filters_records(&self) -> bool {
        // Destructured so that a new filter cannot be forgotten here.
        let TicketFilter {
            number,
            entity_id,
            status,
            priority,
            assigned_to_id,
            assigned,
            tags,
            search: _,
            custom_fields,
            sla_breached,
            sla_due_before,
            by_sla_due: _,
            team_id,
            snoozed,
        } = self;
        number.is_some()
            || entity_id.is_some()
            || status.is_some()
            || priority.is_some()
            || assigned_to_id.is_some()
            || assigned.is_some()
            || !tags.is_empty()
            || !custom_fields.is_empty()
            || sla_breached.is_some()
            || sla_due_before.is_some()
            || team_id.is_some()
            || snoozed.is_some()
    }
}

/// Whether a key with `scopes` reads internal notes (comments with
/// `isInternal`): the one rule of every way a note leaves the service
/// (the comment list, search, the change feed, ticket sockets). Notes are
/// the agents' talk about a ticket, and an agent's key writes tickets;
/// `tickets:read` alone is a reader's (a dashboard, a portal, an export),
/// which sees what the customer sees. An agent's session may also read
/// them by its role (the built-in `viewer`), which the caller adds.
pub fn reads_internal_notes(scopes: &ScopeSet) -> bool {
    scopes.contains(Scope::TicketsWrite)
}

/// A ticket search: the words, and whether internal notes are searched
/// ([`reads_internal_notes`]).
#[derive(Debug, Clone)]
pub struct TicketSearch {
    pub text: TextQuery,
    pub include_internal: bool,
}

/// A PATCH: `None` keeps a field; `assigned_to_id: Some(None)` unassigns
/// (`team_id: Some(None)` takes the ticket out of its team);
/// `tags` (a sorted set) replaces the ticket's tags; `custom_fields` sets
/// (or, with `None`, clears) the values it names and keeps the others.
#[derive(Debug, Clone, Default)]
pub struct TicketUpdate {
    pub status: Option<TicketStatus>,
    pub priority: Option<Priority>,
    pub assigned_to_id: Option<Option<Uuid>>,
    pub team_id: Option<Option<Uuid>>,
    pub tags: Option<Vec<String>>,
    pub custom_fields: FieldPatch,
}

/// The fields a change can touch, as they are before it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct TicketState {
    pub status: TicketStatus,
    pub priority: Priority,
    pub assigned_to_id: Option<Uuid>,
    pub team_id: Option<Uuid>,
    pub resolved_at: Option<Timestamp>,
}

/// `assignment` of a `ticket.updated` whose assignee changed: who decided
/// (routing or a person) and the ticket's team at that moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TicketAssignment {
    pub reason: crate::teams::model::Reason,
    pub team_id: Option<Uuid>,
}

/// One field that really changed, with its typed values before and after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Status {
        from: TicketStatus,
        to: TicketStatus,
    },
    Priority {
        from: Priority,
        to: Priority,
    },
    Assignee {
        from: Option<Uuid>,
        to: Option<Uuid>,
    },
    Team {
        from: Option<Uuid>,
        to: Option<Uuid>,
    },
}

impl Change {
    /// The field's API name (the key under `changes` in `ticket.updated`).
    pub fn field(&self) -> &'static str {
        match self {
            Change::Status { .. } => "status",
            Change::Priority { .. } => "priority",
            Change::Assignee { .. } => "assignedToId",
            Change::Team { .. } => "teamId",
        }
    }

    /// The timeline entry kind of this change.
    pub fn activity_kind(&self) -> ActivityKind {
        match self {
            Change::Status { .. } => ActivityKind::StatusChanged,
            Change::Priority { .. } => ActivityKind::PriorityChanged,
            Change::Team { .. } => ActivityKind::TeamChanged,
            Change::Assignee { .. } => ActivityKind::AssigneeChanged,
        }
    }

    /// The values before and after as the timeline and the event spell
    /// them (a status or priority by its name, an id as text, none as null).
    pub fn texts(&self) -> (Option<String>, Option<String>) {
        fn id(value: &Option<Uuid>) -> Option<String> {
            value.map(|id| id.to_string())
        }
        match self {
            Change::Status { from, to } => (Some(from.to_string()), Some(to.to_string())),
            Change::Priority { from, to } => (Some(from.to_string()), Some(to.to_string())),
            Change::Assignee { from, to } | Change::Team { from, to } => (id(from), id(to)),
        }
    }

    /// Whether this change resolves the ticket.
    pub fn resolves(&self) -> bool {
        matches!(
            self,
            Change::Status {
                to: TicketStatus::Resolved,
                ..
            }
        )
    }
}

impl TicketState {
    /// Open work for an agent's ticket capacity: OPEN or IN_PROGRESS.
    pub fn is_open_work(&self) -> bool {
        matches!(self.status, TicketStatus::Open | TicketStatus::InProgress)
    }

    /// The changes `update` makes to this state: only fields whose value
    /// differs, so a PATCH that repeats the current values changes nothing.
    pub fn diff(&self, update: &TicketUpdate) -> Vec<Change> {
        let mut changes = Vec::new();
        if let Some(status) = update.status
            && status != self.status
        {
            changes.push(Change::Status {
                from: self.status,
                to: status,
            });
        }
        if let Some(priority) = update.priority
            && priority != self.priority
        {
            changes.push(Change::Priority {
                from: self.priority,
                to: priority,
            });
        }
        if let Some(assignee) = update.assigned_to_id
            && assignee != self.assigned_to_id
        {
            changes.push(Change::Assignee {
                from: self.assigned_to_id,
                to: assignee,
            });
        }
        if let Some(team) = update.team_id
            && team != self.team_id
        {
            changes.push(Change::Team {
                from: self.team_id,
                to: team,
            });
        }
        changes
    }

    /// The state after `update`, with `resolved_at` following the status:
    /// set when it becomes RESOLVED, cleared when the ticket is reopened,
    /// kept when a resolved ticket is closed.
    pub fn apply(&self, update: &TicketUpdate, now: Timestamp) -> TicketState {
        let status = update.status.unwrap_or(self.status);
        let resolved_at = match status {
            TicketStatus::Resolved if self.status != TicketStatus::Resolved => Some(now),
            TicketStatus::Open | TicketStatus::InProgress | TicketStatus::Pending => None,
            TicketStatus::Resolved | TicketStatus::Closed => self.resolved_at,
        };
        TicketState {
            priority: update.priority.unwrap_or(self.priority),
            assigned_to_id: update.assigned_to_id.unwrap_or(self.assigned_to_id),
            team_id: update.team_id.unwrap_or(self.team_id),
            status,
            resolved_at,
        }
    }
}

/// What an escalation does and why: from the API (`automatic: false`) or
/// from an escalation rule (`automatic: true`, with its `rule_id`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escalation {
    /// The agent who takes the ticket over; must be a user of the company.
    /// `None` (a rule's escalation to a team alone) unassigns the ticket, so
    /// that the team's routing may assign it.
    pub to_user: Option<Uuid>,
    /// The team the ticket moves into (escalation rules only).
    pub to_team: Option<Uuid>,
    pub reason: Option<String>,
    pub automatic: bool,
    pub rule_id: Option<Uuid>,
}

/// A comment on a ticket; `isInternal` ones are for agents only.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Comment {
    pub id: Uuid,
    pub ticket_id: Uuid,
    pub body: String,
    pub author_id: Option<Uuid>,
    pub author: Option<UserRef>,
    /// `agent` or `customer`.
    #[schema(schema_with = crate::openapi::schema::author_type)]
    pub author_type: AuthorType,
    pub is_internal: bool,
    pub attachments: Vec<AttachmentRef>,
    pub created_at: Timestamp,
    /// `scheduled` (until `sendAt`), `held` (in the undo window until
    /// `sendAt`), `sent` or `cancelled`: only a sent comment reaches the
    /// customer, webhooks and ticket sockets.
    #[schema(value_type = String, example = "sent")]
    pub delivery_state: crate::delivery::DeliveryState,
    /// When a scheduled or held reply is (or was to be) delivered; null for
    /// one sent at once.
    pub send_at: Option<Timestamp>,
    /// `{messageId, from, to[], cc[]}` of the email the comment was made
    /// from; null for one not made from an email.
    pub email: Option<CommentEmail>,
}

#[derive(Debug, Clone)]
pub struct NewComment {
    pub body: String,
    pub author_id: Option<Uuid>,
    pub author_type: AuthorType,
    pub is_internal: bool,
    /// Unattached uploads of the tenant to attach.
    pub attachment_ids: Vec<Uuid>,
    /// The agent to assign the ticket to if it has no assignee (the
    /// company's `assignOnReply`, for an agent's public reply).
    pub assign_on_reply: Option<Uuid>,
    /// At once, or held or scheduled (an agent's public reply).
    pub delivery: crate::delivery::Delivery,
}

/// One entry of a ticket's timeline.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Activity {
    pub id: Uuid,
    pub ticket_id: Uuid,
    /// `created`, `status_changed`, `priority_changed`, `assignee_changed`,
    /// `escalated`, `commented`, `tags_changed`, `custom_fields_changed` or
    /// `team_changed`.
    #[serde(rename = "type")]
    #[schema(value_type = String)]
    pub kind: ActivityKind,
    pub from: Option<String>,
    pub to: Option<String>,
    /// Kind-specific facts: the escalation (reason, rule…), the comment id,
    /// the tags `added` and `removed`, the custom fields `{key: {from, to}}`.
    pub details: Option<serde_json::Value>,
    /// Who made the change; null for an entry written before entries named
    /// their actor.
    pub actor: Option<Actor>,
    pub created_at: Timestamp,
    /// The ticket's version the change made (1 for entries written before
    /// tickets had versions).
    pub version: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> TicketState {
        TicketState {
            status: TicketStatus::Open,
            priority: Priority::Medium,
            assigned_to_id: None,
            team_id: None,
            resolved_at: None,
        }
    }

    #[test]
    fn numbers_are_six_digits() {
        assert_eq!(ticket_number(1), "TKT-000001");
        assert_eq!(ticket_number(123_456), "TKT-123456");
        assert_eq!(ticket_number(1_234_567), "TKT-1234567");
    }

    #[test]
    fn diff_lists_only_real_changes() {
        let user = Uuid::now_v7();
        let same = TicketUpdate {
            status: Some(TicketStatus::Open),
            priority: Some(Priority::Medium),
            assigned_to_id: Some(None),
            team_id: None,
            tags: None,
            custom_fields: Default::default(),
        };
        assert!(state().diff(&same).is_empty());
        let changed = TicketUpdate {
            status: Some(TicketStatus::Resolved),
            priority: None,
            assigned_to_id: Some(Some(user)),
            team_id: None,
            tags: None,
            custom_fields: Default::default(),
        };
        let changes = state().diff(&changed);
        assert_eq!(changes.len(), 2);
        assert_eq!(changes[0].field(), "status");
        assert_eq!(changes[1].texts().1, Some(user.to_string()));
        assert_eq!(changes[1].activity_kind(), ActivityKind::AssigneeChanged);
    }

    #[test]
    fn resolved_at_follows_the_status() {
        let now = Timestamp::now();
        let resolve = TicketUpdate {
            status: Some(TicketStatus::Resolved),
            ..Default::default()
        };
        let resolved = state().apply(&resolve, now);
        assert_eq!(resolved.resolved_at, Some(now));
        let close = TicketUpdate {
            status: Some(TicketStatus::Closed),
            ..Default::default()
        };
        assert_eq!(resolved.apply(&close, now).resolved_at, Some(now));
        let reopen = TicketUpdate {
            status: Some(TicketStatus::Open),
            ..Default::default()
        };
        assert_eq!(resolved.apply(&reopen, now).resolved_at, None);
    }
}
