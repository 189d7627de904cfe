//! SQL of assignment: routing's claim of a team's next queued chat, a
//! person's assignment, the queue as visitors see it, and the requeue of an
//! offline agent's unanswered chats.
//!
//! A chat claim runs in one transaction that first locks the team's row
//! (Postgres `FOR NO KEY UPDATE`; SQLite's `BEGIN IMMEDIATE` excludes every
//! other writer), so two nodes draining one team take turns. Each agent's
//! open chats are one `agent_loads` row, kept by triggers on the sessions in
//! the transaction of every change: the claim picks its member with one
//! query over those rows, then locks that member's row with the count
//! re-checked (a member of several teams is also taken by claims of the
//! others), so no two claims can both fill their last place. The chat
//! itself is taken with a conditional UPDATE (still ACTIVE and unassigned),
//! so a close or a person's assignment that won the race is never
//! overwritten. A ticket claim counts its members' open tickets under the
//! locks of their user rows, in id order: tickets are routed one at a time
//! as they are created or moved, not at the rate of chats. A Redis script would avoid the database round
//! trips, but the counts would then live in two stores that can disagree
//! after a crash; the rows are the truth the API shows.

use serde::Serialize;
use uuid::Uuid;

use super::model::RoutingMode;
use super::store::{QUEUED, lock};
use crate::auth::Tenant;
use crate::chat::Session;
use crate::chat::store::record_session;
use crate::db::{Backend, Db, Query, Tx};
use crate::error::StoreError;
use crate::events::{self, EventName};
use crate::tickets::model::Ticket;
use crate::tickets::store as ticket_store;
use crate::time::Timestamp;

crate::text_enum! {
    /// Why a chat's assignee changed.
    pub enum Reason {
        Routing = "routing",
        Manual = "manual",
        Requeue = "requeue",
    }
}

/// `assignment` of a `chat.assigned` event and of the socket frame.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Assignment {
    pub reason: Reason,
    pub team_id: Option<Uuid>,
    pub assignee_id: Option<Uuid>,
}

/// The data of `chat.assigned`, and who held the chat before.
#[derive(Debug, Clone, Serialize)]
pub struct Assigned {
    pub session: Session,
    pub assignment: Assignment,
    /// The assignee the change took the chat from, whose console must hear
    /// of it; not part of the event.
    #[serde(skip)]
    pub previous_assignee_id: Option<Uuid>,
}

#[derive(sqlx::FromRow)]
struct TeamRouting {
    routing_mode: RoutingMode,
    chat_capacity: i64,
    last_assigned_id: Option<Uuid>,
}

struct Load {
    user_id: Uuid,
    open: i64,
}

/// What a claim did.
pub enum Claim {
    Assigned(Box<Assigned>),
    /// The queue is empty, routing is manual, or no member can take more.
    Nothing,
    /// The head of the queue was closed or assigned meanwhile: claim again.
    Raced,
}

/// Assigns the head of `team`'s queue to one of `available` (members
/// online and taking work) below capacity, by the team's routing mode.
pub async fn claim_next(
    db: &Db,
    tenant: &Tenant,
    team: Uuid,
    available: &[Uuid],
) -> Result<Claim, StoreError> {
    // Most claims find nothing to do: the drain after a new chat ends with
    // one that finds the queue empty. Looked at without the team's lock, so
    // that they do not queue behind the claims that assign (most of a
    // chat's POST was spent waiting for that lock under load). A chat
    // queued after this read is claimed by its own drain, which reads after
    // its insert committed; what is claimed is still decided under the lock.
    if available.is_empty() || !queue_has_head(db, team).await? {
        return Ok(Claim::Nothing);
    }
    let mut tx = db.begin().await?;
    let routing: Option<TeamRouting> = Query::new(
        "SELECT routing_mode, chat_capacity, last_assigned_id FROM teams WHERE id = $1 AND ",
    )
    .bind(team)
    .push_tenant(tenant, "")
    .push(row_lock(tx.backend()))
    .fetch_optional(&mut tx)
    .await?;
    let Some(routing) = routing.filter(|r| r.routing_mode != RoutingMode::Manual) else {
        return Ok(Claim::Nothing);
    };
    // The head is locked before the member's load row, the order in which
    // a close or a person's assignment of it (the session, then its
    // trigger's load rows) takes them, so the two cannot deadlock.
    let head: Option<Uuid> = Query::new(format!(
        "SELECT id FROM chat_sessions WHERE team_id = $1 AND {QUEUED} \
         ORDER BY created_at, id LIMIT 1"
    ))
    .bind(team)
    .push(row_lock(tx.backend()))
    .fetch_column(&mut tx)
    .await?
    .pop();
    let Some(head) = head else {
        return Ok(Claim::Nothing);
    };
    let Some(agent) = take_capacity(&mut tx, team, &routing, available).await? else {
        return Ok(Claim::Nothing);
    };
    let now = Timestamp::now();
    let taken = Query::new(format!(
        "UPDATE chat_sessions SET assignee_id = $2, assigned_at = $3, updated_at = $3, \
         assignment_reason = 'routing' WHERE id = $1 AND {QUEUED}"
    ))
    .bind(head)
    .bind(agent)
    .bind(now)
    .rows_affected(&mut tx)
    .await?;
    if taken == 0 {
        return Ok(Claim::Raced);
    }
    Query::new("UPDATE teams SET last_assigned_id = $2 WHERE id = $1")
        .bind(team)
        .bind(agent)
        .execute(&mut tx)
        .await?;
    let assignment = Assignment {
        reason: Reason::Routing,
        team_id: Some(team),
        assignee_id: Some(agent),
    };
    // Only unassigned chats are queued: nobody held it.
    let assigned = finish(&mut tx, tenant, head, assignment, None).await?;
    tx.commit().await?;
    Ok(Claim::Assigned(Box::new(assigned)))
}

/// Whether `team` has a queued chat, read without a lock.
async fn queue_has_head(db: &Db, team: Uuid) -> Result<bool, StoreError> {
    let head: Vec<Uuid> = Query::new(format!(
        "SELECT id FROM chat_sessions WHERE team_id = $1 AND {QUEUED} LIMIT 1"
    ))
    .bind(team)
    .fetch_column(db)
    .await?;
    Ok(!head.is_empty())
}

/// Picks the member of `team` among `available` that routing gives the
/// next chat and takes one of their places: their `agent_loads` row is
/// locked (Postgres) with its count re-checked below capacity, so a claim
/// of another team that filled them meanwhile makes this pick the next
/// candidate, and the session's assignment (whose trigger counts it)
/// commits before anyone else can count them again.
async fn take_capacity(
    tx: &mut Tx,
    team: Uuid,
    routing: &TeamRouting,
    available: &[Uuid],
) -> Result<Option<Uuid>, StoreError> {
    if available.is_empty() {
        return Ok(None);
    }
    // Every lost re-check is a member who reached capacity and drops out
    // of the next pick, so there are at most as many rounds as members.
    for _ in 0..=available.len() {
        let Some((agent, counted)) = next_candidate(tx, team, routing, available).await? else {
            return Ok(None);
        };
        if !counted {
            Query::new(
                "INSERT INTO agent_loads (user_id) VALUES ($1) ON CONFLICT (user_id) DO NOTHING",
            )
            .bind(agent)
            .execute(&mut *tx)
            .await?;
        }
        let below: Option<Uuid> =
            Query::new("SELECT user_id FROM agent_loads WHERE user_id = $1 AND open_chats < $2")
                .bind(agent)
                .bind(routing.chat_capacity)
                .push(row_lock(tx.backend()))
                .fetch_column(&mut *tx)
                .await?
                .pop();
        if below.is_some() {
            return Ok(Some(agent));
        }
    }
    Ok(None)
}

/// The member routing picks among the members of `team` in `available`
/// below the chat capacity, and whether they have an `agent_loads` row yet
/// (a member never assigned has none: no open chats). Round robin takes
/// the first after the last one picked (in id order, wrapping); least busy
/// the fewest open chats, then the one idle longest (never assigned first),
/// then the lowest id.
async fn next_candidate(
    tx: &mut Tx,
    team: Uuid,
    routing: &TeamRouting,
    available: &[Uuid],
) -> Result<Option<(Uuid, bool)>, StoreError> {
    let query = Query::new(
        "SELECT m.user_id, l.user_id IS NOT NULL AS counted FROM team_members m \
         LEFT JOIN agent_loads l ON l.user_id = m.user_id \
         WHERE m.team_id = $1 AND COALESCE(l.open_chats, 0) < $2 AND m.user_id IN ",
    )
    .bind(team)
    .bind(routing.chat_capacity)
    .push_bind_list(available.iter().copied());
    let query = match (routing.routing_mode, routing.last_assigned_id) {
        (RoutingMode::RoundRobin, Some(last)) => query
            .push(" ORDER BY CASE WHEN m.user_id > ")
            .push_bind(last)
            .push(" THEN 0 ELSE 1 END, m.user_id"),
        (RoutingMode::LeastBusy, _) => query.push(
            " ORDER BY COALESCE(l.open_chats, 0), l.last_assigned_at IS NOT NULL, \
             l.last_assigned_at, m.user_id",
        ),
        _ => query.push(" ORDER BY m.user_id"),
    };
    query.push(" LIMIT 1").fetch_optional(&mut *tx).await
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
pub async fn claim_ticket(
    db: &Db,
    tenant: &Tenant,
    team: Uuid,
    ticket: Uuid,
    available: &[Uuid],
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
        ticket_store::assign_by_routing(&mut tx, tenant, ticket, team, agent).await?
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

/// Records the assignment of `session` (its row already changed), taken
/// from `previous`: the change feed's entry and the `chat.assigned` event,
/// in `tx`.
async fn finish(
    tx: &mut Tx,
    tenant: &Tenant,
    session: Uuid,
    assignment: Assignment,
    previous: Option<Uuid>,
) -> Result<Assigned, StoreError> {
    let session = record_session(tx, tenant, session).await?;
    let assigned = Assigned {
        session,
        assignment,
        previous_assignee_id: previous.filter(|p| Some(*p) != assignment.assignee_id),
    };
    events::emit(tx, tenant, EventName::ChatAssigned, &assigned).await?;
    Ok(assigned)
}

/// A person's change of a session's team and / or assignee (`None`: kept;
/// `Some(None)`: cleared). Routing never takes a chat with an assignee, so a
/// person's choice stands until a person changes it. Answers the
/// assignment when the assignee or team changed.
pub async fn assign_manually(
    db: &Db,
    tenant: &Tenant,
    session: Uuid,
    team: Option<Option<Uuid>>,
    assignee: Option<Option<Uuid>>,
) -> Result<Option<Assigned>, StoreError> {
    let mut tx = db.begin().await?;
    let current: Option<(Option<Uuid>, Option<Uuid>)> =
        Query::new("SELECT team_id, assignee_id FROM chat_sessions WHERE id = $1 AND ")
            .bind(session)
            .push_tenant(tenant, "")
            .push(lock(tx.backend()))
            .fetch_optional(&mut tx)
            .await?;
    let (current_team, current_assignee) = current.ok_or(StoreError::NotFound)?;
    if let Some(Some(team)) = team {
        super::store::ensure_team(&mut tx, tenant, team, "teamId").await?;
    }
    if let Some(Some(user)) = assignee {
        crate::db::ensure_reference(
            &mut tx,
            tenant.company_id,
            crate::db::Table::Users,
            user,
            "assigneeId",
        )
        .await?;
    }
    let team = team.unwrap_or(current_team);
    let assignee = assignee.unwrap_or(current_assignee);
    if team == current_team && assignee == current_assignee {
        tx.commit().await?;
        return Ok(None);
    }
    let now = Timestamp::now();
    let assigned_at = if assignee == current_assignee {
        None
    } else {
        assignee.map(|_| now)
    };
    Query::new(
        "UPDATE chat_sessions SET team_id = $2, assignee_id = $3, \
         assigned_at = COALESCE($4, assigned_at), assignment_reason = 'manual', \
         updated_at = $5 WHERE id = $1",
    )
    .bind(session)
    .bind(team)
    .bind(assignee)
    .bind(assigned_at)
    .bind(now)
    .execute(&mut tx)
    .await?;
    let assignment = Assignment {
        reason: Reason::Manual,
        team_id: team,
        assignee_id: assignee,
    };
    let assigned = finish(&mut tx, tenant, session, assignment, current_assignee).await?;
    tx.commit().await?;
    Ok(Some(assigned))
}

/// A queued chat and its place in line (1 is next).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Queued {
    pub id: Uuid,
    pub entity_id: Uuid,
}

/// A claim's row lock on Postgres: `NO KEY UPDATE`, so that inserting a
/// session that references the team (a key share) does not wait for a
/// claim, while claims of the team (and those taking one agent's places)
/// still take turns. SQLite's `BEGIN IMMEDIATE` already excludes them.
fn row_lock(backend: Backend) -> &'static str {
    match backend {
        Backend::Postgres => " FOR NO KEY UPDATE",
        Backend::Sqlite => "",
    }
}

/// `team`'s queue in arrival order.
pub async fn queue(db: &Db, team: Uuid) -> Result<Vec<Queued>, StoreError> {
    Query::new(format!(
        "SELECT id, entity_id FROM chat_sessions WHERE team_id = $1 AND {QUEUED} \
         ORDER BY created_at, id"
    ))
    .bind(team)
    .fetch_all(db)
    .await
}

/// The team and place in line (1 is next) of `session`, if it is queued.
pub async fn position(
    db: &Db,
    tenant: &Tenant,
    session: Uuid,
) -> Result<Option<(Uuid, i64)>, StoreError> {
    Query::new(
        "SELECT s.team_id, (SELECT COUNT(*) FROM chat_sessions q WHERE q.team_id = s.team_id \
         AND q.status = 'ACTIVE' AND q.assignee_id IS NULL AND (q.created_at < s.created_at \
         OR (q.created_at = s.created_at AND q.id <= s.id))) FROM chat_sessions s \
         WHERE s.id = $1 AND s.status = 'ACTIVE' AND s.assignee_id IS NULL \
         AND s.team_id IS NOT NULL AND ",
    )
    .bind(session)
    .push_tenant(tenant, "s")
    .fetch_optional(db)
    .await
}

/// The teams with a queue and routing on, of every tenant, to drain.
pub async fn teams_waiting(db: &Db) -> Result<Vec<(Uuid, Tenant)>, StoreError> {
    let rows: Vec<(Uuid, Uuid, crate::auth::Mode)> = Query::new(format!(
        "SELECT t.id, t.company_id, t.mode FROM teams t WHERE t.routing_mode <> 'manual' \
         AND EXISTS (SELECT 1 FROM chat_sessions s WHERE s.team_id = t.id AND s.{})",
        QUEUED.replace(" AND ", " AND s.")
    ))
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(team, company_id, mode)| (team, Tenant { company_id, mode }))
        .collect())
}

/// Routing's assignments whose agent has been away since before `before`
/// and has not answered since the assignment: those to requeue.
pub async fn unanswered_away_before(
    db: &Db,
    before: Timestamp,
) -> Result<Vec<(Uuid, Uuid, Tenant)>, StoreError> {
    let rows: Vec<(Uuid, Uuid, Uuid, crate::auth::Mode)> = Query::new(
        "SELECT s.id, s.assignee_id, s.company_id, s.mode FROM chat_sessions s \
         JOIN agents_away a ON a.company_id = s.company_id AND a.mode = s.mode \
         AND a.user_id = s.assignee_id \
         WHERE a.since < $1 AND s.status = 'ACTIVE' AND s.assignment_reason = 'routing' \
         AND s.team_id IS NOT NULL \
         AND NOT EXISTS (SELECT 1 FROM chat_messages m WHERE m.session_id = s.id \
         AND m.sender_type = 'agent' AND m.sender_id = s.assignee_id \
         AND m.created_at >= s.assigned_at)",
    )
    .bind(before)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(session, agent, company_id, mode)| (session, agent, Tenant { company_id, mode }))
        .collect())
}

/// Records that `user`'s presence ended now (kept if already recorded:
/// the first moment counts).
pub async fn mark_away(db: &Db, tenant: &Tenant, user: Uuid) -> Result<(), StoreError> {
    Query::new(
        "INSERT INTO agents_away (company_id, mode, user_id, since) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (company_id, mode, user_id) DO NOTHING",
    )
    .bind_tenant(tenant)
    .bind(user)
    .bind(Timestamp::now())
    .execute(db)
    .await
}

/// `user` is online again.
pub async fn mark_back(db: &Db, tenant: &Tenant, user: Uuid) -> Result<(), StoreError> {
    Query::new("DELETE FROM agents_away WHERE user_id = $1 AND ")
        .bind(user)
        .push_tenant(tenant, "")
        .execute(db)
        .await
}

/// Puts a routed chat back in its team's queue if `agent` still holds it
/// unanswered: it keeps its place (arrival order).
pub async fn requeue(
    db: &Db,
    tenant: &Tenant,
    session: Uuid,
    agent: Uuid,
) -> Result<Option<Assigned>, StoreError> {
    let mut tx = db.begin().await?;
    let team: Option<Option<Uuid>> = Query::new(
        "UPDATE chat_sessions SET assignee_id = NULL, assignment_reason = 'requeue', \
         updated_at = $3 WHERE id = $1 AND assignee_id = $2 AND status = 'ACTIVE' \
         AND assignment_reason = 'routing' RETURNING team_id",
    )
    .bind(session)
    .bind(agent)
    .bind(Timestamp::now())
    .fetch_column(&mut tx)
    .await?
    .pop();
    let Some(team) = team else {
        return Ok(None);
    };
    let assignment = Assignment {
        reason: Reason::Requeue,
        team_id: team,
        assignee_id: None,
    };
    let assigned = finish(&mut tx, tenant, session, assignment, Some(agent)).await?;
    tx.commit().await?;
    Ok(Some(assigned))
}
