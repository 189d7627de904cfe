//! Starting a new ticket's clocks: the policy it gets, chosen before its
//! row is written, and its first-response and resolution clocks.

use std::collections::HashMap;

use uuid::Uuid;

use super::policy::{fields_met, hold_policy};
use super::{CLOCK_COLUMNS, Happening, Met};
use crate::apply::{TicketFacts, choose};
use crate::auth::Tenant;
use crate::cache::Rules;
use crate::clocks::{Clock, Metric, Terms};
use crate::db::{NewRows, Query, Tx, Value};
use crate::error::StoreError;
use crate::time::Timestamp;
use vocab::ticket::{Priority, TicketStatus};

/// A ticket being created, as its create has it: nothing is read back.
#[derive(Debug, Clone, Copy)]
pub struct NewTicketFacts<'a> {
    pub priority: Priority,
    pub entity_id: Uuid,
    pub team_id: Option<Uuid>,
    /// Normalised tags.
    pub tags: &'a [String],
    pub chat_session_id: Option<Uuid>,
    pub created_at: Timestamp,
}

impl NewTicketFacts<'_> {
    fn conditions(&self) -> TicketFacts<'_> {
        TicketFacts {
            priority: self.priority,
            entity_id: self.entity_id,
            team_id: self.team_id,
            tags: self.tags,
        }
    }
}

/// The policy a new ticket gets, chosen before its row is written so the
/// row is written with it.
#[derive(Debug, Clone)]
pub enum Opening {
    /// No policy applies (or the one that does sets no targets for the
    /// ticket's priority).
    Nothing,
    /// This policy applies, with these terms.
    Chosen(Box<Terms>),
    /// The first policy whose other conditions the ticket meets has a
    /// custom field condition: the stored field values decide, once they
    /// are written.
    AfterFields,
}

impl Opening {
    /// The ticket's `sla_policy_id` as first written.
    pub fn policy_id(&self) -> Option<Uuid> {
        match self {
            Opening::Chosen(terms) => Some(terms.policy_id),
            Opening::Nothing | Opening::AfterFields => None,
        }
    }
}

/// The policy a new ticket gets from the tenant's `rules`, in memory.
pub fn opening(rules: &Rules, facts: &NewTicketFacts<'_>) -> Opening {
    let ticket = facts.conditions();
    let first = rules
        .policies
        .iter()
        .find(|p| p.enabled && p.conditions.met_by(&ticket));
    match first {
        None => Opening::Nothing,
        Some(policy) if policy.conditions.custom_fields.is_some() => Opening::AfterFields,
        Some(policy) => rules
            .terms(policy, facts.priority)
            .map_or(Opening::Nothing, |terms| Opening::Chosen(Box::new(terms))),
    }
}

/// A new ticket's first-response and resolution clocks, started at its
/// creation, written in one statement (after its tags and fields, which a
/// custom field condition reads). A ticket made from a chat that an agent
/// has already answered has its first response met by that answer.
pub async fn start(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
    rules: &Rules,
    facts: &NewTicketFacts<'_>,
    opening: Opening,
) -> Result<Vec<Met>, StoreError> {
    let terms = match opening {
        Opening::Nothing => return Ok(Vec::new()),
        Opening::Chosen(terms) => *terms,
        Opening::AfterFields => {
            let Some(terms) = chosen_with_fields(tx, tenant, ticket_id, rules, facts).await? else {
                return Ok(Vec::new());
            };
            hold_policy(tx, ticket_id, Some(terms.policy_id), None).await?;
            terms
        }
    };
    let mut clocks = started(ticket_id, &terms, facts.created_at);
    let answered = match facts.chat_session_id {
        Some(session) => first_agent_message(tx, session).await?,
        None => None,
    };
    let mut met = Vec::new();
    if let Some(at) = answered {
        let at = at.max(facts.created_at);
        for clock in &mut clocks {
            if clock.metric == Metric::FirstResponse && clock.fulfil(&terms, at) {
                met.push(Met {
                    happening: Happening::Fulfilled,
                    metric: clock.metric,
                    due_at: clock.due_at,
                    at,
                });
            }
        }
    }
    insert_new(tx, tenant, &clocks).await?;
    Ok(met)
}

/// The first-response and resolution clocks of a new ticket under `terms`,
/// started at `created_at`.
fn started(ticket_id: Uuid, terms: &Terms, created_at: Timestamp) -> Vec<Clock> {
    let stopped = terms.stops(TicketStatus::Open);
    [Metric::FirstResponse, Metric::Resolution]
        .into_iter()
        .filter_map(|metric| Clock::start(ticket_id, metric, terms, created_at, stopped))
        .collect()
}

/// What `start` would write for a new ticket, when knowing it reads
/// nothing: its policy chosen from its own facts (not from stored custom
/// field values) and no chat whose agent answers could meet a clock. None
/// when `start` must run.
pub fn started_without_reading(
    ticket_id: Uuid,
    opening: &Opening,
    facts: &NewTicketFacts<'_>,
) -> Option<Vec<Clock>> {
    if facts.chat_session_id.is_some() {
        return None;
    }
    match opening {
        Opening::Nothing => Some(Vec::new()),
        Opening::Chosen(terms) => Some(started(ticket_id, terms, facts.created_at)),
        Opening::AfterFields => None,
    }
}

/// The rows of new `clocks` (`start`'s, or [`started_without_reading`]'s
/// for a create written in one statement), described once for both ways
/// of writing them (`NewRows`); None for no clocks.
pub fn new_clock_rows(tenant: &Tenant, clocks: &[Clock]) -> Option<NewRows> {
    let (first, rest) = clocks.split_first()?;
    let columns = format!("company_id, mode, {CLOCK_COLUMNS}");
    let rows = NewRows::of("ticket_sla", columns, clock_values(tenant, first));
    Some(
        rest.iter()
            .fold(rows, |rows, clock| rows.and(clock_values(tenant, clock))),
    )
}

/// A clock's row: the tenant's company and mode, then `CLOCK_COLUMNS`.
fn clock_values(tenant: &Tenant, clock: &Clock) -> [Value; 14] {
    [
        tenant.company_id.into(),
        tenant.mode.as_str().into(),
        clock.ticket_id.into(),
        clock.metric.into(),
        clock.state.into(),
        clock.target_minutes.into(),
        clock.used_seconds.into(),
        clock.running_since.into(),
        clock.due_at.into(),
        clock.warn_at.into(),
        clock.paused_at.into(),
        clock.warned_at.into(),
        clock.breached_at.into(),
        clock.fulfilled_at.into(),
    ]
}

/// The policy of a new ticket whose choice depends on its stored custom
/// field values, with its terms.
async fn chosen_with_fields(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
    rules: &Rules,
    facts: &NewTicketFacts<'_>,
) -> Result<Option<Terms>, StoreError> {
    let ticket = facts.conditions();
    let mut field_checks = HashMap::new();
    for policy in rules.policies.iter().filter(|p| {
        p.enabled && p.conditions.custom_fields.is_some() && p.conditions.met_by(&ticket)
    }) {
        let met = fields_met(tx, tenant, ticket_id, policy).await?;
        field_checks.insert(policy.id, met);
    }
    let chosen = choose(&rules.policies, &ticket, |p| {
        field_checks.get(&p.id).copied().unwrap_or(false)
    });
    Ok(chosen.and_then(|policy| rules.terms(policy, facts.priority)))
}

/// A new ticket's clocks, in one INSERT.
async fn insert_new(tx: &mut Tx, tenant: &Tenant, clocks: &[Clock]) -> Result<(), StoreError> {
    match new_clock_rows(tenant, clocks) {
        Some(rows) => rows.insert().execute(tx).await,
        None => Ok(()),
    }
}

/// When an agent first wrote in the chat session, if ever.
async fn first_agent_message(tx: &mut Tx, session: Uuid) -> Result<Option<Timestamp>, StoreError> {
    let first: Vec<Timestamp> = Query::new(
        "SELECT created_at FROM chat_messages WHERE session_id = $1 AND sender_type = 'agent' \
         ORDER BY created_at LIMIT 1",
    )
    .bind(session)
    .fetch_column(tx)
    .await?;
    Ok(first.into_iter().next())
}
