//! Moving a ticket's clocks on its later changes: an agent's answer in the
//! chat it was made from, a re-evaluated policy, a status change, a comment.

use uuid::Uuid;

use super::policy::{chosen_policy, held_terms, hold_policy, may_apply, terms};
use super::{Happening, Met, Reply, TicketFactsRow, clocks_of, save, ticket_facts};
use crate::auth::Tenant;
use crate::clocks::{Clock, ClockState, Metric, Terms};
use crate::db::{Query, Tx};
use crate::error::StoreError;
use crate::model::Policy;
use crate::time::Timestamp;
use vocab::ticket::{Priority, TicketStatus};

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
/// creation; without a policy the clocks go. `was` is the ticket's
/// priority before the change (see `kept_or_new_terms`).
pub async fn reevaluate(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
    was: Priority,
    now: Timestamp,
) -> Result<(), StoreError> {
    if !may_apply(tx, tenant, ticket_id).await? {
        return Ok(());
    }
    let facts = ticket_facts(tx, tenant, ticket_id).await?;
    let chosen = match chosen_policy(tx, tenant, ticket_id, &facts).await? {
        Some(policy) => kept_or_new_terms(tx, tenant, &policy, &facts, was).await?,
        None => None,
    };
    let Some((terms, sla_priority)) = chosen else {
        if facts.sla_policy_id.is_some() {
            hold_policy(tx, ticket_id, None, None).await?;
            Query::new("DELETE FROM ticket_sla WHERE ticket_id = $1")
                .bind(ticket_id)
                .execute(&mut *tx)
                .await?;
        }
        return Ok(());
    };
    if facts.sla_policy_id != Some(terms.policy_id) || facts.sla_priority != sla_priority {
        hold_policy(tx, ticket_id, Some(terms.policy_id), sla_priority).await?;
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

/// The terms the chosen `policy` gives the ticket, with the priority whose
/// targets they are when it is not the ticket's own. A policy the ticket
/// already holds that sets no targets for its new priority keeps its
/// clocks counting against the targets they had (those of `was`, or of
/// the priority they already kept): escalating a ticket to URGENT under a
/// policy without URGENT targets must not silently end its SLA.
async fn kept_or_new_terms(
    tx: &mut Tx,
    tenant: &Tenant,
    policy: &Policy,
    facts: &TicketFactsRow,
    was: Priority,
) -> Result<Option<(Terms, Option<Priority>)>, StoreError> {
    if let Some(own) = terms(tx, tenant, policy, facts.priority).await? {
        return Ok(Some((own, None)));
    }
    if facts.sla_policy_id != Some(policy.id) {
        return Ok(None);
    }
    let kept = facts.sla_priority.unwrap_or(was);
    let terms = terms(tx, tenant, policy, kept).await?;
    Ok(terms.map(|terms| (terms, Some(kept))))
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

/// A comment was added: an agent's public reply (one with an author)
/// meets the first response
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
    if matches!(reply, Reply::Internal | Reply::Unattributed) {
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
        Reply::Internal | Reply::Unattributed => {}
    }
    Ok(met)
}
