//! Routing's claim of the head of a team's chat queue: the member it
//! picks, whose place is taken under the locks.

use uuid::Uuid;

use super::{Assigned, Assignment, Reason, finish, row_lock};
use crate::auth::Tenant;
use crate::db::{Db, Query, Tx};
use crate::error::StoreError;
use crate::teams::model::RoutingMode;
use crate::teams::store::QUEUED;
use crate::time::Timestamp;

#[derive(sqlx::FromRow)]
struct TeamRouting {
    routing_mode: RoutingMode,
    chat_capacity: i64,
    last_assigned_id: Option<Uuid>,
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
/// online and taking work) below capacity, by the team's routing mode,
/// at `now`.
pub async fn claim_next(
    db: &Db,
    tenant: &Tenant,
    team: Uuid,
    available: &[Uuid],
    now: Timestamp,
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
    let taken = Query::new(format!(
        "UPDATE chat_sessions SET assignee_id = $2, assigned_at = $3, updated_at = $3, \
         version = version + 1, \
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
    let assigned = finish(&mut tx, tenant, head, assignment, None, now).await?;
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
