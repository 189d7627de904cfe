//! Reading the chat queues: a team's queue, a session's place in line, and
//! the teams with chats waiting.

use uuid::Uuid;

use crate::auth::Tenant;
use crate::db::{Db, Query};
use crate::error::StoreError;
use crate::teams::store::QUEUED;

/// A queued chat and its place in line (1 is next).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Queued {
    pub id: Uuid,
    pub entity_id: Uuid,
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
        .map(|(team, company_id, mode)| (team, Tenant::new(company_id, mode)))
        .collect())
}
