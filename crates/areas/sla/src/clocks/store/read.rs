//! Reading the clocks for the API: a ticket's `sla`, a page's clocks, and
//! the list's SLA filters and order.

use std::collections::HashMap;

use uuid::Uuid;

use super::{CLOCK_COLUMNS, clocks_of};
use crate::clocks::{Clock, TicketSla};
use crate::db::{Db, On, Query};
use crate::error::StoreError;
use crate::time::Timestamp;

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
