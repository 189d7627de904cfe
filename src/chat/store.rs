//! SQL for chat sessions and messages. Every query filters on the tenant
//! (company and mode). Sending a message locks its session row (an UPDATE),
//! so a message never lands in a session that a concurrent close has closed.

use uuid::Uuid;

use super::model::{
    Message, NewMessage, NewSession, SenderType, Session, SessionFilter, SessionStatus,
    agent_reply_email,
};
use crate::auth::Tenant;
use crate::db::Db;
use crate::error::StoreError;
use crate::time::{Timestamp, new_id};
use crate::validate::Page;
use crate::{mail, on_db, on_tx};

const SESSION_COLUMNS: &str =
    "id, entity_id, status, visitor_name, visitor_email, created_at, updated_at, closed_at";

/// Messages with the agent's name (the join only matches agent messages).
const MESSAGE_SELECT: &str = "SELECT m.id, m.session_id, m.body, m.sender_type, m.sender_id, \
     u.name AS sender_name, m.created_at FROM chat_messages m \
     LEFT JOIN users u ON m.sender_type = 'agent' AND u.id = m.sender_id \
     AND u.company_id = m.company_id";

/// Why a message was not sent.
#[derive(Debug)]
pub enum SendError {
    /// The session is CLOSED (409 `session_closed`).
    SessionClosed,
    Store(StoreError),
}

impl From<StoreError> for SendError {
    fn from(err: StoreError) -> Self {
        SendError::Store(err)
    }
}

impl From<sqlx::Error> for SendError {
    fn from(err: sqlx::Error) -> Self {
        SendError::Store(err.into())
    }
}

/// Creates an ACTIVE session. The entity must be one of the company's.
pub async fn create_session(
    db: &Db,
    tenant: &Tenant,
    new: &NewSession,
) -> Result<Session, StoreError> {
    crate::entities::store::ensure_belongs(db, tenant.company_id, new.entity_id, "entityId")
        .await?;
    let now = Timestamp::now();
    let sql = format!(
        "INSERT INTO chat_sessions (id, company_id, mode, entity_id, status, visitor_name, \
         visitor_email, created_at, updated_at) VALUES ($1, $2, $3, $4, 'ACTIVE', $5, $6, $7, $7) \
         RETURNING {SESSION_COLUMNS}"
    );
    Ok(
        on_db!(db, c => sqlx::query_as::<_, Session>(sqlx::AssertSqlSafe(sql))
        .bind(new_id())
        .bind(tenant.company_id)
        .bind(tenant.mode.as_str())
        .bind(new.entity_id)
        .bind(&new.visitor_name)
        .bind(&new.visitor_email)
        .bind(now)
        .fetch_one(c)
        .await?),
    )
}

pub async fn find_session(db: &Db, tenant: &Tenant, id: Uuid) -> Result<Session, StoreError> {
    let sql = format!(
        "SELECT {SESSION_COLUMNS} FROM chat_sessions WHERE id = $1 AND company_id = $2 AND mode = $3"
    );
    Ok(
        on_db!(db, c => sqlx::query_as::<_, Session>(sqlx::AssertSqlSafe(sql))
        .bind(id).bind(tenant.company_id).bind(tenant.mode.as_str())
        .fetch_one(c).await?),
    )
}

/// A page of sessions, newest first, and the total matching the filter.
pub async fn list_sessions(
    db: &Db,
    tenant: &Tenant,
    filter: &SessionFilter,
    page: Page,
) -> Result<(Vec<Session>, i64), StoreError> {
    let mut conditions = vec!["company_id = $1".to_string(), "mode = $2".to_string()];
    if filter.entity_id.is_some() {
        conditions.push(format!("entity_id = ${}", conditions.len() + 1));
    }
    if filter.status.is_some() {
        conditions.push(format!("status = ${}", conditions.len() + 1));
    }
    let next = conditions.len() + 1;
    let filter_sql = conditions.join(" AND ");
    let sql = format!(
        "SELECT {SESSION_COLUMNS} FROM chat_sessions WHERE {filter_sql} \
         ORDER BY created_at DESC, id DESC LIMIT ${next} OFFSET ${}",
        next + 1
    );
    let count_sql = format!("SELECT COUNT(*) FROM chat_sessions WHERE {filter_sql}");
    let sessions = on_db!(db, c => {
        let mut query = sqlx::query_as::<_, Session>(sqlx::AssertSqlSafe(sql))
            .bind(tenant.company_id)
            .bind(tenant.mode.as_str());
        if let Some(entity) = filter.entity_id {
            query = query.bind(entity);
        }
        if let Some(status) = filter.status {
            query = query.bind(status);
        }
        query.bind(page.limit).bind(page.offset).fetch_all(c).await?
    });
    let total = on_db!(db, c => {
        let mut query = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(count_sql))
            .bind(tenant.company_id)
            .bind(tenant.mode.as_str());
        if let Some(entity) = filter.entity_id {
            query = query.bind(entity);
        }
        if let Some(status) = filter.status {
            query = query.bind(status);
        }
        query.fetch_one(c).await?
    });
    Ok((sessions, total))
}

/// A session's messages, oldest first.
pub async fn messages(
    db: &Db,
    tenant: &Tenant,
    session_id: Uuid,
) -> Result<Vec<Message>, StoreError> {
    let sql = format!(
        "{MESSAGE_SELECT} WHERE m.session_id = $1 AND m.company_id = $2 AND m.mode = $3 \
         ORDER BY m.created_at, m.id"
    );
    Ok(
        on_db!(db, c => sqlx::query_as::<_, Message>(sqlx::AssertSqlSafe(sql))
        .bind(session_id).bind(tenant.company_id).bind(tenant.mode.as_str())
        .fetch_all(c).await?),
    )
}

/// Sets the status (`CLOSED` closes, `ACTIVE` reopens). Returns the session
/// and whether anything changed.
pub async fn set_status(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    status: SessionStatus,
) -> Result<(Session, bool), StoreError> {
    let now = Timestamp::now();
    let closed_at = (status == SessionStatus::Closed).then_some(now);
    let sql = format!(
        "UPDATE chat_sessions SET status = $4, closed_at = $5, updated_at = $6 \
         WHERE id = $1 AND company_id = $2 AND mode = $3 AND status <> $4 \
         RETURNING {SESSION_COLUMNS}"
    );
    let updated = on_db!(db, c => sqlx::query_as::<_, Session>(sqlx::AssertSqlSafe(sql))
        .bind(id).bind(tenant.company_id).bind(tenant.mode.as_str())
        .bind(status).bind(closed_at).bind(now)
        .fetch_optional(c).await?);
    match updated {
        Some(session) => Ok((session, true)),
        None => Ok((find_session(db, tenant, id).await?, false)),
    }
}

/// Adds a message to an ACTIVE session. An agent message to a session with
/// a visitor email also queues the reply email (with `visitor_link`, the
/// link that continues the chat) in the same transaction.
pub async fn create_message(
    db: &Db,
    tenant: &Tenant,
    session_id: Uuid,
    new: NewMessage,
    visitor_link: Option<&str>,
) -> Result<(Session, Message), SendError> {
    let now = Timestamp::now();
    let mut tx = db.begin().await?;
    let sql = format!(
        "UPDATE chat_sessions SET updated_at = $4 WHERE id = $1 AND company_id = $2 AND mode = $3 \
         RETURNING {SESSION_COLUMNS}"
    );
    let session = on_tx!(&mut tx, c => sqlx::query_as::<_, Session>(sqlx::AssertSqlSafe(sql))
        .bind(session_id).bind(tenant.company_id).bind(tenant.mode.as_str()).bind(now)
        .fetch_optional(c).await?)
    .ok_or(StoreError::NotFound)?;
    if session.status == SessionStatus::Closed {
        return Err(SendError::SessionClosed);
    }
    let message = Message {
        id: new_id(),
        session_id,
        body: new.body,
        sender_type: new.sender_type,
        sender_id: new.sender_id,
        sender_name: new.sender_name,
        created_at: now,
    };
    on_tx!(&mut tx, c => sqlx::query(
        "INSERT INTO chat_messages (id, session_id, company_id, mode, body, sender_type, \
         sender_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)")
        .bind(message.id)
        .bind(session_id)
        .bind(tenant.company_id)
        .bind(tenant.mode.as_str())
        .bind(&message.body)
        .bind(message.sender_type)
        .bind(message.sender_id)
        .bind(message.created_at)
        .execute(c)
        .await?
        .rows_affected());
    if message.sender_type == SenderType::Agent
        && let Some(link) = visitor_link
        && let Some(email) = agent_reply_email(&session, &message, link)
    {
        mail::queue(&mut tx, tenant, &email).await?;
    }
    tx.commit().await?;
    Ok((session, message))
}

/// Where a replay looks: one session, or every session of an entity.
#[derive(Debug, Clone, Copy)]
pub enum ReplayScope {
    Session(Uuid),
    Entity(Uuid),
}

/// Up to `limit` messages after message `since` (in `created_at`, `id`
/// order) in `scope`, oldest first. NotFound if `since` is not a message of
/// that scope.
pub async fn messages_after(
    db: &Db,
    tenant: &Tenant,
    scope: ReplayScope,
    since: Uuid,
    limit: i64,
) -> Result<Vec<Message>, StoreError> {
    let (scope_sql, scope_id) = match scope {
        ReplayScope::Session(id) => ("m.session_id = $4", id),
        ReplayScope::Entity(id) => (
            "m.session_id IN (SELECT s.id FROM chat_sessions s WHERE s.entity_id = $4 \
             AND s.company_id = $2 AND s.mode = $3)",
            id,
        ),
    };
    let anchor_sql = format!(
        "SELECT m.created_at FROM chat_messages m \
         WHERE m.id = $1 AND m.company_id = $2 AND m.mode = $3 AND {scope_sql}"
    );
    let anchor = on_db!(db, c => sqlx::query_scalar::<_, Timestamp>(sqlx::AssertSqlSafe(anchor_sql))
        .bind(since).bind(tenant.company_id).bind(tenant.mode.as_str()).bind(scope_id)
        .fetch_one(c).await?);
    let sql = format!(
        "{MESSAGE_SELECT} WHERE m.company_id = $2 AND m.mode = $3 AND {scope_sql} \
         AND (m.created_at > $5 OR (m.created_at = $5 AND m.id > $1)) \
         ORDER BY m.created_at, m.id LIMIT $6"
    );
    Ok(
        on_db!(db, c => sqlx::query_as::<_, Message>(sqlx::AssertSqlSafe(sql))
        .bind(since).bind(tenant.company_id).bind(tenant.mode.as_str()).bind(scope_id)
        .bind(anchor).bind(limit)
        .fetch_all(c).await?),
    )
}
