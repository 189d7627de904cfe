//! SQL for tickets' SLA clocks. The ticket store calls these inside the
//! transaction of the change that moves a clock (create, status, comment,
//! a re-evaluated policy), so a committed change always has its clocks.
//!
//! Here are what the clocks report, the ticket facts they read and their
//! rows (read and saved); `start` starts a new ticket's clocks, `changed`
//! moves them on a ticket's later changes, `policy` chooses the policy
//! that applies and its terms, and `read` reads them for the API.

mod changed;
mod policy;
mod read;
mod start;

pub use changed::{agent_chatted, commented, reevaluate, status_changed};
pub use read::{SOONEST_DUE_ORDER, of, of_each, push_filter, sla_of};
pub use start::{NewTicketFacts, Opening, new_clock_rows, opening, start, started_without_reading};

use uuid::Uuid;

use super::{Clock, Metric};
use crate::auth::Tenant;
use crate::db::{On, Query, Tx};
use crate::error::StoreError;
use crate::time::Timestamp;
use vocab::ticket::{Priority, TicketStatus};

const CLOCK_COLUMNS: &str = "ticket_id, metric, state, target_minutes, used_seconds, \
     running_since, due_at, warn_at, paused_at, warned_at, breached_at, fulfilled_at";

/// What happened to a clock that the ticket's timeline and events record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Happening {
    Warning,
    Breached,
    Fulfilled,
}

/// Something a clock did, for the ticket's timeline and events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Met {
    pub happening: Happening,
    pub metric: Metric,
    pub due_at: Option<Timestamp>,
    pub at: Timestamp,
}

/// Who wrote a comment, as far as the clocks care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// A public comment by an agent: meets the first and next response.
    AgentPublic,
    /// An internal note: meets nothing.
    Internal,
    /// A public agent comment no one wrote (a key's, without `authorId`,
    /// such as an automatic acknowledgement): meets nothing, since no
    /// person has answered yet.
    Unattributed,
    /// The customer: starts a next-response clock.
    Customer,
}

#[derive(sqlx::FromRow)]
struct TicketFactsRow {
    status: TicketStatus,
    priority: Priority,
    entity_id: Uuid,
    team_id: Option<Uuid>,
    created_at: Timestamp,
    sla_policy_id: Option<Uuid>,
    /// Set only while the clocks count against another priority's targets
    /// than the ticket's own (see `reevaluate`).
    sla_priority: Option<Priority>,
}

impl TicketFactsRow {
    /// The priority whose targets the ticket's clocks count against.
    fn target_priority(&self) -> Priority {
        self.sla_priority.unwrap_or(self.priority)
    }
}

async fn ticket_facts(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
) -> Result<TicketFactsRow, StoreError> {
    Query::new(
        "SELECT status, priority, entity_id, team_id, created_at, sla_policy_id, \
         sla_priority FROM tickets \
         WHERE id = $1 AND company_id = $2 AND mode = $3",
    )
    .bind(ticket_id)
    .bind_tenant(tenant)
    .fetch_one(tx)
    .await
}

async fn clocks_of<'c>(on: impl Into<On<'c>>, ticket_id: Uuid) -> Result<Vec<Clock>, StoreError> {
    Query::new(format!(
        "SELECT {CLOCK_COLUMNS} FROM ticket_sla WHERE ticket_id = $1 ORDER BY metric"
    ))
    .bind(ticket_id)
    .fetch_all(on)
    .await
}

async fn save(tx: &mut Tx, tenant: &Tenant, clock: &Clock) -> Result<(), StoreError> {
    Query::new(format!(
        "INSERT INTO ticket_sla (company_id, mode, {CLOCK_COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) \
         ON CONFLICT (ticket_id, metric) DO UPDATE SET state = $5, target_minutes = $6, \
         used_seconds = $7, running_since = $8, due_at = $9, warn_at = $10, paused_at = $11, \
         warned_at = $12, breached_at = $13, fulfilled_at = $14"
    ))
    .bind_tenant(tenant)
    .bind(clock.ticket_id)
    .bind(clock.metric)
    .bind(clock.state)
    .bind(clock.target_minutes)
    .bind(clock.used_seconds)
    .bind(clock.running_since)
    .bind(clock.due_at)
    .bind(clock.warn_at)
    .bind(clock.paused_at)
    .bind(clock.warned_at)
    .bind(clock.breached_at)
    .bind(clock.fulfilled_at)
    .execute(tx)
    .await
}
