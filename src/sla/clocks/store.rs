//! SQL for tickets' SLA clocks. The ticket store calls these inside the
//! transaction of the change that moves a clock (create, status, comment,
//! a re-evaluated policy), so a committed change always has its clocks.

use std::collections::HashMap;

use uuid::Uuid;

use super::{Clock, ClockState, Metric, Terms, TicketSla};
use crate::auth::Tenant;
use crate::custom_fields;
use crate::custom_fields::model::RecordKind;
use crate::custom_fields::store::{self as field_store, Recorded};
use crate::db::{Db, On, Query, Tx, Value};
use crate::error::StoreError;
use crate::sla::apply::{TicketFacts, choose};
use crate::sla::cache::Rules;
use crate::sla::calendar::Hours;
use crate::sla::model::Policy;
use crate::sla::store::{find_calendar, list_policies};
use crate::tags::store::{self as tag_store, Tagged};
use crate::tickets::model::{Priority, TicketStatus};
use crate::time::Timestamp;

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
}

async fn ticket_facts(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
) -> Result<TicketFactsRow, StoreError> {
    Query::new(
        "SELECT status, priority, entity_id, team_id, created_at, sla_policy_id \
         FROM tickets \
         WHERE id = $1 AND company_id = $2 AND mode = $3",
    )
    .bind(ticket_id)
    .bind_tenant(tenant)
    .fetch_one(tx)
    .await
}

/// The policy that applies to the ticket now, with its terms.
async fn chosen_terms(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
    facts: &TicketFactsRow,
) -> Result<Option<Terms>, StoreError> {
    let policies = list_policies(&mut *tx, tenant).await?;
    if !policies.iter().any(|p| p.enabled) {
        return Ok(None);
    }
    let tags = tag_store::of(&mut *tx, Tagged::Ticket, ticket_id).await?;
    let ticket = TicketFacts {
        priority: facts.priority,
        entity_id: facts.entity_id,
        team_id: facts.team_id,
        tags: &tags,
    };
    let mut field_checks = HashMap::new();
    for policy in policies
        .iter()
        .filter(|p| p.enabled && p.conditions.custom_fields.is_some())
    {
        let met = fields_met(tx, tenant, ticket_id, policy).await?;
        field_checks.insert(policy.id, met);
    }
    let chosen = choose(&policies, &ticket, |p| {
        field_checks.get(&p.id).copied().unwrap_or(false)
    });
    match chosen {
        Some(policy) => terms(tx, tenant, policy, facts.priority).await,
        None => Ok(None),
    }
}

/// Whether the ticket's custom field values meet the policy's condition;
/// a condition that no longer fits the definitions meets nothing.
async fn fields_met(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
    policy: &Policy,
) -> Result<bool, StoreError> {
    let Some(condition) = &policy.conditions.custom_fields else {
        return Ok(true);
    };
    let definitions = custom_fields::store::list(&mut *tx, tenant).await?;
    let Ok(filter) = custom_fields::model::json_filter(
        "customFields",
        condition,
        &definitions,
        RecordKind::Ticket,
    ) else {
        return Ok(false);
    };
    let query = Query::new("SELECT COUNT(*) FROM tickets t WHERE t.id = ").push_bind(ticket_id);
    let count: i64 = field_store::push_filter(query, Recorded::Ticket, "t.id", &filter)
        .fetch_scalar(tx)
        .await?;
    Ok(count > 0)
}

/// The terms `policy` gives a ticket of `priority`; `None` when it sets no
/// targets for that priority.
async fn terms(
    tx: &mut Tx,
    tenant: &Tenant,
    policy: &Policy,
    priority: Priority,
) -> Result<Option<Terms>, StoreError> {
    let Some(targets) = policy.targets.get(priority) else {
        return Ok(None);
    };
    let hours = match policy.business_hours_id {
        Some(id) => match find_calendar(&mut *tx, tenant, id).await?.hours() {
            Some(hours) => hours,
            None => return Ok(None),
        },
        None => Hours::Always,
    };
    Ok(Some(Terms::new(policy, hours, targets.clone())))
}

/// The terms of the policy the ticket holds (`None` without one, or once
/// it is deleted or disabled: its clocks then stand as they are).
async fn held_terms(
    tx: &mut Tx,
    tenant: &Tenant,
    facts: &TicketFactsRow,
) -> Result<Option<Terms>, StoreError> {
    let Some(policy_id) = facts.sla_policy_id else {
        return Ok(None);
    };
    let policies = list_policies(&mut *tx, tenant).await?;
    match policies.iter().find(|p| p.id == policy_id) {
        Some(policy) => terms(tx, tenant, policy, facts.priority).await,
        None => Ok(None),
    }
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

async fn hold_policy(
    tx: &mut Tx,
    ticket_id: Uuid,
    policy_id: Option<Uuid>,
) -> Result<(), StoreError> {
    Query::new("UPDATE tickets SET sla_policy_id = $2 WHERE id = $1")
        .bind(ticket_id)
        .bind(policy_id)
        .execute(tx)
        .await
}

/// Whether the ticket may have SLA work: it holds a policy, or its company
/// has an enabled one. One read of two indexes, so that the writes of a
/// company without policies (most of them) skip the facts, tags and
/// policy list that choosing one reads.
async fn may_apply(tx: &mut Tx, tenant: &Tenant, ticket_id: Uuid) -> Result<bool, StoreError> {
    let found: i64 = Query::new(
        "SELECT CASE WHEN EXISTS (SELECT 1 FROM tickets WHERE id = $1 \
         AND sla_policy_id IS NOT NULL) OR EXISTS (SELECT 1 FROM sla_policies \
         WHERE company_id = $2 AND mode = $3 AND enabled) THEN CAST(1 AS BIGINT) \
         ELSE CAST(0 AS BIGINT) END",
    )
    .bind(ticket_id)
    .bind_tenant(tenant)
    .fetch_scalar(tx)
    .await?;
    Ok(found == 1)
}

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
            hold_policy(tx, ticket_id, Some(terms.policy_id)).await?;
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

/// `start`'s INSERT of `clocks` (from [`started_without_reading`]) as a CTE
/// of a statement that inserts their ticket (Postgres): appends `, clocks
/// AS (INSERT … SELECT … FROM {from})`, each clock once per row of `from`.
/// Nothing when there are no clocks.
pub fn push_started_from(query: Query, tenant: &Tenant, clocks: &[Clock], from: &str) -> Query {
    if clocks.is_empty() {
        return query;
    }
    let mut query = query.push(&format!(
        ", clocks AS (INSERT INTO ticket_sla (company_id, mode, {CLOCK_COLUMNS}) "
    ));
    for (i, clock) in clocks.iter().enumerate() {
        query = query.push(if i == 0 {
            "SELECT "
        } else {
            " UNION ALL SELECT "
        });
        for (j, value) in clock_values(tenant, clock).into_iter().enumerate() {
            if j > 0 {
                query = query.push(", ");
            }
            query = query.push_bind(value);
        }
        query = query.push(&format!(" FROM {from}"));
    }
    query.push(")")
}

/// A clock's row as `insert_new` writes it, in `CLOCK_COLUMNS` order after
/// the tenant's company and mode.
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
    if clocks.is_empty() {
        return Ok(());
    }
    let mut query = Query::new(format!(
        "INSERT INTO ticket_sla (company_id, mode, {CLOCK_COLUMNS}) VALUES "
    ));
    for (i, clock) in clocks.iter().enumerate() {
        if i > 0 {
            query = query.push(", ");
        }
        query = query.push_bind_list(clock_values(tenant, clock));
    }
    query.execute(tx).await
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

/// An agent answered in the chat a ticket was made from: for the customer
/// that is the first response, so it meets the ticket's first-response
/// clock (and nothing else: a chat message is not a reply on the ticket,
/// whose next responses are counted between its comments).
async fn chat_answered(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
    at: Timestamp,
) -> Result<Vec<Met>, StoreError> {
    let facts = ticket_facts(tx, tenant, ticket_id).await?;
    let Some(terms) = held_terms(tx, tenant, &facts).await? else {
        return Ok(Vec::new());
    };
    let mut met = Vec::new();
    for mut clock in clocks_of(&mut *tx, ticket_id).await? {
        if clock.metric == Metric::FirstResponse && clock.fulfil(&terms, at) {
            met.push(Met {
                happening: Happening::Fulfilled,
                metric: clock.metric,
                due_at: clock.due_at,
                at,
            });
            save(tx, tenant, &clock).await?;
        }
    }
    Ok(met)
}

/// The tickets made from chat `session` whose first response an agent's
/// message there at `at` meets, each with what it met (read through the
/// partial index on `tickets.chat_session_id`, so an agent's chat message
/// costs one probe when no ticket was made from the chat).
pub async fn agent_chatted(
    tx: &mut Tx,
    tenant: &Tenant,
    session: Uuid,
    at: Timestamp,
) -> Result<Vec<(Uuid, Vec<Met>)>, StoreError> {
    let waiting: Vec<Uuid> = Query::new(
        "SELECT t.id FROM tickets t JOIN ticket_sla s ON s.ticket_id = t.id \
         WHERE t.chat_session_id = $1 AND t.company_id = $2 AND t.mode = $3 \
         AND s.metric = 'first_response' AND s.fulfilled_at IS NULL ORDER BY t.id",
    )
    .bind(session)
    .bind_tenant(tenant)
    .fetch_column(&mut *tx)
    .await?;
    let mut answered = Vec::new();
    for ticket in waiting {
        let met = chat_answered(tx, tenant, ticket, at).await?;
        if !met.is_empty() {
            answered.push((ticket, met));
        }
    }
    Ok(answered)
}

/// The ticket's priority, entity, team, tags or fields changed: the policy
/// is chosen again. The same or another policy keeps each clock's time and
/// counts it against the new target (so due times stay measured from the
/// creation); a metric the old policy did not measure starts at the
/// creation; without a policy the clocks go.
pub async fn reevaluate(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
    now: Timestamp,
) -> Result<(), StoreError> {
    if !may_apply(tx, tenant, ticket_id).await? {
        return Ok(());
    }
    let facts = ticket_facts(tx, tenant, ticket_id).await?;
    let chosen = chosen_terms(tx, tenant, ticket_id, &facts).await?;
    let Some(terms) = chosen else {
        if facts.sla_policy_id.is_some() {
            hold_policy(tx, ticket_id, None).await?;
            Query::new("DELETE FROM ticket_sla WHERE ticket_id = $1")
                .bind(ticket_id)
                .execute(&mut *tx)
                .await?;
        }
        return Ok(());
    };
    if facts.sla_policy_id != Some(terms.policy_id) {
        hold_policy(tx, ticket_id, Some(terms.policy_id)).await?;
    }
    let mut clocks = clocks_of(&mut *tx, ticket_id).await?;
    for clock in &mut clocks {
        let before = clock.clone();
        if clock.retarget(&terms) {
            if *clock != before {
                save(tx, tenant, clock).await?;
            }
        } else {
            Query::new("DELETE FROM ticket_sla WHERE ticket_id = $1 AND metric = $2")
                .bind(ticket_id)
                .bind(clock.metric)
                .execute(&mut *tx)
                .await?;
        }
    }
    let stopped = terms.stops(facts.status);
    for metric in [Metric::FirstResponse, Metric::Resolution] {
        if clocks.iter().any(|c| c.metric == metric) {
            continue;
        }
        let started = Clock::start(ticket_id, metric, &terms, facts.created_at, stopped);
        if let Some(mut clock) = started {
            if stopped {
                clock.paused_at = Some(now);
            }
            save(tx, tenant, &clock).await?;
        }
    }
    Ok(())
}

/// The status moved from `from` to the ticket's current one: clocks stop
/// on statuses that stop them, run again when it leaves them, and the
/// resolution is met on RESOLVED or CLOSED (and runs again on reopening).
pub async fn status_changed(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
    from: TicketStatus,
    now: Timestamp,
) -> Result<Vec<Met>, StoreError> {
    let facts = ticket_facts(tx, tenant, ticket_id).await?;
    let Some(terms) = held_terms(tx, tenant, &facts).await? else {
        return Ok(Vec::new());
    };
    let to = facts.status;
    let resolved = matches!(to, TicketStatus::Resolved | TicketStatus::Closed);
    let was_resolved = matches!(from, TicketStatus::Resolved | TicketStatus::Closed);
    let mut met = Vec::new();
    for mut clock in clocks_of(&mut *tx, ticket_id).await? {
        let before = clock.clone();
        if resolved && clock.metric == Metric::Resolution {
            if clock.fulfil(&terms, now) {
                met.push(Met {
                    happening: Happening::Fulfilled,
                    metric: clock.metric,
                    due_at: clock.due_at,
                    at: now,
                });
            }
        } else if terms.stops(to) {
            clock.pause(&terms, now);
        } else {
            if was_resolved {
                clock.reopen(&terms, now);
            }
            clock.resume(&terms, now);
        }
        if clock != before {
            save(tx, tenant, &clock).await?;
        }
    }
    Ok(met)
}

/// A comment was added: an agent's public reply meets the first response
/// and a waiting next response; a customer's comment starts a next
/// response unless one already runs (it is due from the first unanswered
/// comment).
pub async fn commented(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
    reply: Reply,
    now: Timestamp,
) -> Result<Vec<Met>, StoreError> {
    if reply == Reply::Internal {
        return Ok(Vec::new());
    }
    let facts = ticket_facts(tx, tenant, ticket_id).await?;
    let Some(terms) = held_terms(tx, tenant, &facts).await? else {
        return Ok(Vec::new());
    };
    let clocks = clocks_of(&mut *tx, ticket_id).await?;
    let mut met = Vec::new();
    match reply {
        Reply::AgentPublic => {
            for mut clock in clocks {
                let answers = matches!(clock.metric, Metric::FirstResponse | Metric::NextResponse);
                if answers && clock.fulfil(&terms, now) {
                    met.push(Met {
                        happening: Happening::Fulfilled,
                        metric: clock.metric,
                        due_at: clock.due_at,
                        at: now,
                    });
                    save(tx, tenant, &clock).await?;
                }
            }
        }
        Reply::Customer => {
            let waiting = clocks.iter().any(|c| {
                c.metric == Metric::NextResponse
                    && matches!(c.state, ClockState::Running | ClockState::Paused)
            });
            if !waiting {
                let stopped = terms.stops(facts.status);
                let clock = Clock::start(ticket_id, Metric::NextResponse, &terms, now, stopped);
                if let Some(clock) = clock {
                    save(tx, tenant, &clock).await?;
                }
            }
        }
        Reply::Internal => {}
    }
    Ok(met)
}

/// ORDER BY terms of `order=sla_due`: the ticket's soonest running due
/// time first, tickets without one after all others (spelt out: SQLite and
/// Postgres put NULLs at opposite ends).
pub const SOONEST_DUE_ORDER: &str = "CASE WHEN (SELECT MIN(s.due_at) FROM ticket_sla s \
     WHERE s.ticket_id = t.id AND s.state = 'running') IS NULL THEN 1 ELSE 0 END, \
     (SELECT MIN(s.due_at) FROM ticket_sla s WHERE s.ticket_id = t.id AND s.state = 'running')";

/// Adds the SLA list filters: `breached` (with or without a breach) and
/// `due_before` (a running clock due before then), as EXISTS probes of
/// the ticket's clocks (at most three rows, by primary key).
pub fn push_filter(
    mut query: Query,
    ticket_id: &str,
    breached: Option<bool>,
    due_before: Option<Timestamp>,
) -> Query {
    if let Some(breached) = breached {
        let exists = if breached { "EXISTS" } else { "NOT EXISTS" };
        query = query.push(&format!(
            " AND {exists} (SELECT 1 FROM ticket_sla s WHERE s.ticket_id = {ticket_id} \
             AND s.breached_at IS NOT NULL)"
        ));
    }
    if let Some(before) = due_before {
        query = query
            .push(&format!(
                " AND EXISTS (SELECT 1 FROM ticket_sla s WHERE s.ticket_id = {ticket_id} \
                 AND s.state = 'running' AND s.due_at < "
            ))
            .push_bind(before)
            .push(")");
    }
    query
}

/// The ticket's `sla` (None without a policy or clocks).
pub async fn of<'c>(
    on: impl Into<On<'c>>,
    ticket_id: Uuid,
    policy_id: Option<Uuid>,
) -> Result<Option<TicketSla>, StoreError> {
    let clocks = clocks_of(on, ticket_id).await?;
    Ok(sla_of(policy_id, &clocks))
}

/// `sla` of a ticket from its policy and clocks.
pub fn sla_of(policy_id: Option<Uuid>, clocks: &[Clock]) -> Option<TicketSla> {
    if policy_id.is_none() && clocks.is_empty() {
        return None;
    }
    Some(TicketSla::of(policy_id, clocks))
}

/// The clocks of each ticket of a page, in one query.
pub async fn of_each(db: &Db, ids: &[Uuid]) -> Result<HashMap<Uuid, Vec<Clock>>, StoreError> {
    let mut by_ticket: HashMap<Uuid, Vec<Clock>> = HashMap::new();
    if ids.is_empty() {
        return Ok(by_ticket);
    }
    let clocks: Vec<Clock> = Query::new(format!(
        "SELECT {CLOCK_COLUMNS} FROM ticket_sla WHERE ticket_id IN "
    ))
    .push_bind_list(ids.iter().copied())
    .push(" ORDER BY ticket_id, metric")
    .fetch_all(db)
    .await?;
    for clock in clocks {
        by_ticket.entry(clock.ticket_id).or_default().push(clock);
    }
    Ok(by_ticket)
}
