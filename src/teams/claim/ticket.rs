//! Routing's claim of a ticket that entered a team unassigned: the member
//! it picks below the ticket capacity, under the members' locks.

use uuid::Uuid;

use super::row_lock;
use crate::attachments::links::Signer;
use crate::auth::Tenant;
use crate::db::{Backend, Db, Query, Tx};
use crate::error::StoreError;
use crate::teams::model::RoutingMode;
use crate::tickets::model::Ticket;
use crate::tickets::store as ticket_store;
use crate::time::Timestamp;

struct Load {
    user_id: Uuid,
    open: i64,
}

/// The members of `team` among `available`, in id order, their user rows
/// locked on Postgres (in that order, so ticket claims cannot deadlock): a
/// member of several teams is counted by the ticket claims of each, which
/// take turns.
async fn lock_members(
    tx: &mut Tx,
    team: Uuid,
    available: &[Uuid],
) -> Result<Vec<Uuid>, StoreError> {
    if available.is_empty() {
        return Ok(Vec::new());
    }
    let members: Vec<Uuid> = Query::new("SELECT user_id FROM team_members WHERE team_id = ")
        .push_bind(team)
        .push(" AND user_id IN ")
        .push_bind_list(available.iter().copied())
        .push(" ORDER BY user_id")
        .fetch_column(&mut *tx)
        .await?;
    if !members.is_empty() && tx.backend() == Backend::Postgres {
        Query::new("SELECT id FROM users WHERE id IN ")
            .push_bind_list(members.iter().copied())
            .push(" ORDER BY id FOR NO KEY UPDATE")
            .execute(&mut *tx)
            .await?;
    }
    Ok(members)
}

#[derive(sqlx::FromRow)]
struct TicketRouting {
    routing_mode: RoutingMode,
    ticket_capacity: i64,
    include_tickets: bool,
    last_ticket_assignee_id: Option<Uuid>,
}

/// Routing of a ticket that entered `team` unassigned: when the team's
/// routing takes tickets, assigns it to one of `available` below the
/// ticket capacity (open tickets: OPEN or IN_PROGRESS assigned to them), by
/// the team's mode, under the team row's lock (as a chat claim) and then
/// the members' user rows in id order. `None` when routing is manual or
/// leaves tickets out, no member can take it, or the ticket was assigned,
/// moved or closed meanwhile: it then stays unassigned in the team.
/// Tickets have no queue: a ticket nobody could take waits for a person.
/// `now` (the node's clock) stamps the assignment.
pub async fn claim_ticket(
    db: &Db,
    tenant: &Tenant,
    team: Uuid,
    ticket: Uuid,
    available: &[Uuid],
    signer: &Signer,
    now: Timestamp,
) -> Result<Option<Ticket>, StoreError> {
    let mut tx = db.begin().await?;
    let routing: Option<TicketRouting> = Query::new(
        "SELECT routing_mode, ticket_capacity, include_tickets, last_ticket_assignee_id \
         FROM teams WHERE id = $1 AND ",
    )
    .bind(team)
    .push_tenant(tenant, "")
    .push(row_lock(tx.backend()))
    .fetch_optional(&mut tx)
    .await?;
    let Some(routing) =
        routing.filter(|r| r.include_tickets && r.routing_mode != RoutingMode::Manual)
    else {
        return Ok(None);
    };
    let members = lock_members(&mut tx, team, available).await?;
    if members.is_empty() {
        return Ok(None);
    }
    // Counted on tickets_list_sa: at most the agents' open tickets are read.
    let loads: Vec<(Uuid, i64)> =
        Query::new("SELECT u.id AS user_id, (SELECT COUNT(*) FROM tickets t WHERE ")
            .push_tenant(tenant, "t")
            .push(
                " AND t.status IN ('OPEN', 'IN_PROGRESS') AND t.assigned_to_id = u.id) AS open \
         FROM users u WHERE u.company_id = ",
            )
            .push_bind(tenant.company_id)
            .push(" AND u.id IN ")
            .push_bind_list(members)
            .push(" ORDER BY u.id")
            .fetch_all(&mut tx)
            .await?;
    // least_busy ties go to the lowest id: tickets have no idle time.
    let loads: Vec<Load> = loads
        .into_iter()
        .map(|(user_id, open)| Load { user_id, open })
        .collect();
    let open: Vec<&Load> = loads
        .iter()
        .filter(|l| l.open < routing.ticket_capacity)
        .collect();
    let Some(agent) = pick(routing.routing_mode, routing.last_ticket_assignee_id, &open) else {
        return Ok(None);
    };
    let Some(assigned) =
        ticket_store::assign_by_routing(&mut tx, tenant, ticket, team, agent, signer, now).await?
    else {
        return Ok(None);
    };
    Query::new("UPDATE teams SET last_ticket_assignee_id = $2 WHERE id = $1")
        .bind(team)
        .bind(agent)
        .execute(&mut tx)
        .await?;
    tx.commit().await?;
    Ok(Some(assigned))
}

/// The member ticket routing picks among `open` (sorted by id, each below
/// capacity), as `next_candidate` picks for chats: round robin takes the
/// first after the last one picked (in id order, wrapping); least busy the
/// fewest open tickets, then the lowest id.
fn pick(mode: RoutingMode, last: Option<Uuid>, open: &[&Load]) -> Option<Uuid> {
    match mode {
        RoutingMode::Manual => None,
        RoutingMode::RoundRobin => open
            .iter()
            .find(|l| last.is_none_or(|last| l.user_id > last))
            .or_else(|| open.first())
            .map(|l| l.user_id),
        RoutingMode::LeastBusy => open
            .iter()
            .min_by_key(|l| (l.open, l.user_id))
            .map(|l| l.user_id),
    }
}
