//! Requeueing an away agent's unanswered chats: when agents go away and
//! come back, the routed chats they left unanswered, and putting one back
//! in its team's queue.

use uuid::Uuid;

use super::{Assigned, Assignment, Reason, finish};
use crate::auth::Tenant;
use crate::db::{Db, Query};
use crate::error::StoreError;
use crate::time::Timestamp;

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
        .map(|(session, agent, company_id, mode)| (session, agent, Tenant::new(company_id, mode)))
        .collect())
}

/// Records that `user`'s presence ended at `now` (kept if already
/// recorded: the first moment counts).
pub async fn mark_away(
    db: &Db,
    tenant: &Tenant,
    user: Uuid,
    now: Timestamp,
) -> Result<(), StoreError> {
    Query::new(
        "INSERT INTO agents_away (company_id, mode, user_id, since) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (company_id, mode, user_id) DO NOTHING",
    )
    .bind_tenant(tenant)
    .bind(user)
    .bind(now)
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
/// unanswered: it keeps its place (arrival order). `now` stamps the change.
pub async fn requeue(
    db: &Db,
    tenant: &Tenant,
    session: Uuid,
    agent: Uuid,
    now: Timestamp,
) -> Result<Option<Assigned>, StoreError> {
    let mut tx = db.begin().await?;
    let team: Option<Option<Uuid>> = Query::new(
        "UPDATE chat_sessions SET assignee_id = NULL, assignment_reason = 'requeue', \
         updated_at = $3, version = version + 1 WHERE id = $1 AND assignee_id = $2 \
         AND status = 'ACTIVE' \
         AND assignment_reason = 'routing' RETURNING team_id",
    )
    .bind(session)
    .bind(agent)
    .bind(now)
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
    let assigned = finish(&mut tx, tenant, session, assignment, Some(agent), now).await?;
    tx.commit().await?;
    Ok(Some(assigned))
}
