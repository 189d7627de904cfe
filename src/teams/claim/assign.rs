//! A person's assignment of a chat session: its team and / or assignee.

use uuid::Uuid;

use super::{Assigned, Assignment, Reason, finish};
use crate::auth::Tenant;
use crate::db::{Db, Query};
use crate::error::StoreError;
use crate::teams::store::lock;
use crate::time::Timestamp;

/// A person's change of a session's team and / or assignee (`None`: kept;
/// `Some(None)`: cleared). Routing never takes a chat with an assignee, so a
/// person's choice stands until a person changes it. Answers the
/// assignment when the assignee or team changed (stamped `now`). With
/// `expected` (the version `If-Match` named) on another version than the
/// session's under the lock, nothing changes: `VersionConflict`.
pub async fn assign_manually(
    db: &Db,
    tenant: &Tenant,
    session: Uuid,
    team: Option<Option<Uuid>>,
    assignee: Option<Option<Uuid>>,
    expected: Option<i64>,
    now: Timestamp,
) -> Result<Option<Assigned>, StoreError> {
    let only = match expected {
        Some(version) => Only::AtVersion(version),
        None => Only::Any,
    };
    assign(db, tenant, session, team, assignee, only, now).await
}

/// Which sessions an assignment applies to, checked under the lock.
#[derive(Clone, Copy)]
enum Only {
    Any,
    /// Still without an assignee (else it is left as it is).
    Unassigned,
    /// At this version (else `VersionConflict`).
    AtVersion(i64),
}

/// An agent's reply assigns the session to them (the company's
/// `assignOnReply`) if it still has no assignee when locked, so an
/// assignment that came first stands. As a person's assignment otherwise
/// (reason `manual`: the agent chose it by answering).
pub async fn assign_on_reply(
    db: &Db,
    tenant: &Tenant,
    session: Uuid,
    agent: Uuid,
    now: Timestamp,
) -> Result<Option<Assigned>, StoreError> {
    assign(
        db,
        tenant,
        session,
        None,
        Some(Some(agent)),
        Only::Unassigned,
        now,
    )
    .await
}

async fn assign(
    db: &Db,
    tenant: &Tenant,
    session: Uuid,
    team: Option<Option<Uuid>>,
    assignee: Option<Option<Uuid>>,
    only: Only,
    now: Timestamp,
) -> Result<Option<Assigned>, StoreError> {
    let mut tx = db.begin().await?;
    let current: Option<(Option<Uuid>, Option<Uuid>, i64)> =
        Query::new("SELECT team_id, assignee_id, version FROM chat_sessions WHERE id = $1 AND ")
            .bind(session)
            .push_tenant(tenant, "")
            .push(lock(tx.backend()))
            .fetch_optional(&mut tx)
            .await?;
    let (current_team, current_assignee, version) = current.ok_or(StoreError::NotFound)?;
    match only {
        Only::Unassigned if current_assignee.is_some() => {
            tx.commit().await?;
            return Ok(None);
        }
        Only::AtVersion(expected) if expected != version => {
            return Err(StoreError::VersionConflict { current: version });
        }
        Only::Any | Only::Unassigned | Only::AtVersion(_) => {}
    }
    if let Some(Some(team)) = team {
        crate::teams::store::ensure_team(&mut tx, tenant, team, "teamId").await?;
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
    let assigned_at = if assignee == current_assignee {
        None
    } else {
        assignee.map(|_| now)
    };
    Query::new(
        "UPDATE chat_sessions SET team_id = $2, assignee_id = $3, \
         assigned_at = COALESCE($4, assigned_at), assignment_reason = 'manual', \
         updated_at = $5, version = version + 1 WHERE id = $1",
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
    let assigned = finish(&mut tx, tenant, session, assignment, current_assignee, now).await?;
    tx.commit().await?;
    Ok(Some(assigned))
}
