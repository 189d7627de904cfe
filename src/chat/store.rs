//! SQL for chat sessions and messages. Every query filters on the tenant
//! (company and mode). Sending a message locks its session row (an UPDATE),
//! so a message never lands in a session that a concurrent close has closed.
//! A message with a `clientMessageId` is stored once per session: the
//! unique index (session, client message id) decides between racing sends.

use uuid::Uuid;

use super::model::{
    Message, NewMessage, NewSession, SenderType, Session, SessionFilter, SessionStatus,
    SessionTags, agent_reply_email,
};
use crate::attachments::store::{self as attachment_store, Kind, Owner};
use crate::auth::Tenant;
use crate::custom_fields::model::FieldPatch;
use crate::custom_fields::store::{self as field_store, Recorded};
use crate::db::{Backend, Db, On, Query, Table, Tx, ensure_reference};
use crate::error::StoreError;
use crate::events;
use crate::events::{RecordChange, RecordType};
use crate::mail;
use crate::paging::{After, COUNT_CAP, Order, Total, capped_count, push_after};
use crate::search::{Index, Search};
use crate::sla::clocks::store as sla_store;
use crate::tags::store::{self as tag_store, Tagged};
use crate::teams::store as team_store;
use crate::time::{Timestamp, new_id};
use crate::validate::Page;

const SESSION_COLUMNS: &str = "id, entity_id, status, visitor_name, visitor_email, created_at, \
     updated_at, closed_at, custom_fields, team_id, assignee_id, assigned_at, \
     visitor_external_id, visitor_verified, email_verified";

/// [`SESSION_COLUMNS`] qualified, for a list that may join search documents.
const SESSION_SELECT: &str = "chat_sessions.id, chat_sessions.entity_id, chat_sessions.status, \
     chat_sessions.visitor_name, chat_sessions.visitor_email, chat_sessions.created_at, \
     chat_sessions.updated_at, chat_sessions.closed_at, chat_sessions.custom_fields, \
     chat_sessions.team_id, chat_sessions.assignee_id, chat_sessions.assigned_at, \
     chat_sessions.visitor_external_id, chat_sessions.visitor_verified, \
     chat_sessions.email_verified";

/// Messages with the agent's name (the join only matches agent messages).
const MESSAGE_SELECT: &str = "SELECT m.id, m.session_id, m.body, m.sender_type, m.sender_id, \
     u.name AS sender_name, m.client_message_id, m.created_at FROM chat_messages m \
     LEFT JOIN users u ON m.sender_type = 'agent' AND u.id = m.sender_id \
     AND u.company_id = m.company_id";

/// What sending a message did.
#[derive(Debug)]
pub enum Sent {
    /// Stored now; `session` as the send left it.
    /// (Boxed: a session is much larger than a message.)
    New {
        session: Box<Session>,
        message: Message,
    },
    /// The session already holds a message with this `clientMessageId`:
    /// that one, and nothing was stored.
    Repeat(Message),
}

impl Sent {
    pub fn into_message(self) -> Message {
        match self {
            Sent::New { message, .. } | Sent::Repeat(message) => message,
        }
    }
}

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

/// Creates an ACTIVE session. The entity must be one of the company's; the
/// session joins `team` (a team of the tenant) or else the entity's default
/// team, if any.
pub async fn create_session(
    db: &Db,
    tenant: &Tenant,
    new: &NewSession,
    team: Option<Uuid>,
) -> Result<Session, StoreError> {
    let mut tx = db.begin().await?;
    let entity = new.entity_id;
    ensure_reference(
        &mut tx,
        tenant.company_id,
        Table::Entities,
        entity,
        "entityId",
    )
    .await?;
    let team = match team {
        Some(team) => {
            team_store::ensure_team(&mut tx, tenant, team, "teamId").await?;
            Some(team)
        }
        None => team_store::default_team(&mut tx, tenant, entity).await?,
    };
    let session: Session = Query::new(format!(
        "INSERT INTO chat_sessions (id, company_id, mode, entity_id, status, visitor_name, \
         visitor_email, created_at, updated_at, team_id, visitor_external_id, \
         visitor_verified, email_verified, email_confirmation_hash) \
         VALUES ($1, $2, $3, $4, 'ACTIVE', $5, $6, $7, $7, $8, $9, $10, $11, $12) \
         RETURNING {SESSION_COLUMNS}"
    ))
    .bind(new_id())
    .bind_tenant(tenant)
    .bind(entity)
    .bind(&new.visitor_name)
    .bind(new.visitor_email.as_deref())
    .bind(Timestamp::now())
    .bind(team)
    .bind(new.identity.external_id.as_deref())
    .bind(new.identity.verified)
    .bind(new.identity.email_verified)
    .bind(
        new.identity
            .confirmation
            .as_ref()
            .map(|(hash, _)| hash.as_str()),
    )
    .fetch_one(&mut tx)
    .await?;
    if let Some((_, email)) = &new.identity.confirmation {
        mail::queue(&mut tx, tenant, email).await?;
    }
    tag_store::replace(&mut tx, tenant, Tagged::ChatSession, session.id, &new.tags).await?;
    field_store::apply(
        &mut tx,
        tenant,
        Recorded::ChatSession,
        session.id,
        &new.custom_fields,
    )
    .await?;
    let session = record_session(&mut tx, tenant, session.id).await?;
    tx.commit().await?;
    Ok(session)
}

pub async fn find_session(db: &Db, tenant: &Tenant, id: Uuid) -> Result<Session, StoreError> {
    load_session(db, tenant, id, "").await
}

/// The session with its tags, on the pool or in a transaction; `suffix`
/// ends the row query (a lock).
async fn load_session<'c>(
    on: impl Into<On<'c>>,
    tenant: &Tenant,
    id: Uuid,
    suffix: &str,
) -> Result<Session, StoreError> {
    let mut on = on.into();
    let mut session: Session = Query::new(format!(
        "SELECT {SESSION_COLUMNS} FROM chat_sessions WHERE id = $1 AND company_id = $2 AND mode = $3"
    ))
    .push(suffix)
    .bind(id)
    .bind_tenant(tenant)
    .fetch_one(on.reborrow())
    .await?;
    session.tags = tag_store::of(on, Tagged::ChatSession, id).await?;
    Ok(session)
}

/// The session as `tx` now holds it, recorded for the change feed.
pub(crate) async fn record_session(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
) -> Result<Session, StoreError> {
    let session = load_session(&mut *tx, tenant, id, "").await?;
    let change = RecordChange::upsert(RecordType::ChatSession, id, &session)?;
    events::record_change(tx, tenant, &change).await?;
    Ok(session)
}

/// `session` with its tags read.
async fn with_tags<'c>(on: impl Into<On<'c>>, mut session: Session) -> Result<Session, StoreError> {
    session.tags = tag_store::of(on, Tagged::ChatSession, session.id).await?;
    Ok(session)
}

/// The session search documents: visitor name, visitor email and message
/// bodies, ranked in that order (weights A to C on Postgres).
static SESSION_INDEX: Index = Index {
    documents: "chat_session_search",
    key: "session_id",
    fts: "chat_session_search_fts",
    ts_rank_weights: "{0.1, 0.2, 0.4, 1.0}",
    bm25_weights: "10.0, 4.0, 2.0",
};

/// A page of sessions, best match first when searching, then newest
/// first, read with one row more than `page.limit`, and the total matching
/// the filter (capped with tag filters or a search, see
/// `paging::capped_count`).
pub async fn list_sessions(
    db: &Db,
    tenant: &Tenant,
    filter: &SessionFilter,
    page: Page,
    after: Option<&After>,
) -> Result<(Vec<Session>, Total), StoreError> {
    let backend = db.backend();
    let search = filter.search.as_ref().map(|text| Search {
        index: &SESSION_INDEX,
        text,
        visible: None,
    });
    let matching = |select: &str| {
        let join = search.map_or(String::new(), |s| s.join(backend, "chat_sessions.id"));
        let mut query = Query::new(format!("{select} FROM chat_sessions{join} WHERE "))
            .push_tenant(tenant, "chat_sessions");
        if let Some(entity) = filter.entity_id {
            query = query.push(" AND entity_id = ").push_bind(entity);
        }
        if let Some(status) = filter.status {
            query = query.push(" AND status = ").push_bind(status);
        }
        if let Some(team) = filter.team_id {
            query = query.push(" AND team_id = ").push_bind(team);
        }
        let query =
            tag_store::push_filter(query, Tagged::ChatSession, "chat_sessions.id", &filter.tags);
        let query = field_store::push_filter(
            query,
            Recorded::ChatSession,
            "chat_sessions.id",
            &filter.custom_fields,
        );
        match search {
            Some(search) => {
                let (query, rank) = search.push_match(query, backend, tenant);
                (query, format!("{}, ", rank.order_term()))
            }
            None => (query, String::new()),
        }
    };
    let (query, rank) = matching(&format!("SELECT {SESSION_SELECT}"));
    let mut sessions: Vec<Session> = push_after(query, "chat_sessions", after, Order::NewestFirst)
        .push(&format!(
            " ORDER BY {rank}chat_sessions.created_at DESC, chat_sessions.id DESC LIMIT "
        ))
        .push_bind(page.limit + 1)
        .push(" OFFSET ")
        .push_bind(page.offset)
        .fetch_all(db)
        .await?;
    let total = if filter.tags.is_empty() && search.is_none() && filter.custom_fields.is_empty() {
        Total::exact(matching("SELECT COUNT(*)").0.fetch_scalar(db).await?)
    } else {
        capped_count(db, matching("SELECT 1").0, COUNT_CAP).await?
    };
    let ids: Vec<Uuid> = sessions.iter().map(|s| s.id).collect();
    let mut tags = tag_store::of_each(db, Tagged::ChatSession, &ids).await?;
    for session in &mut sessions {
        session.tags = tags.remove(&session.id).unwrap_or_default();
    }
    Ok((sessions, total))
}

/// A session's messages, oldest first.
pub async fn messages(
    db: &Db,
    tenant: &Tenant,
    session_id: Uuid,
) -> Result<Vec<Message>, StoreError> {
    let messages = Query::new(MESSAGE_SELECT)
        .push(" WHERE m.session_id = ")
        .push_bind(session_id)
        .push(" AND ")
        .push_tenant(tenant, "m")
        .push(" ORDER BY m.created_at, m.id")
        .fetch_all(db)
        .await?;
    with_attachments(db, messages).await
}

/// The messages with their attachments (one query for all).
async fn with_attachments(db: &Db, messages: Vec<Message>) -> Result<Vec<Message>, StoreError> {
    let ids: Vec<Uuid> = messages.iter().map(|message| message.id).collect();
    let mut files = attachment_store::of_each(db, Kind::Message, &ids).await?;
    Ok(messages
        .into_iter()
        .map(|message| Message {
            attachments: files.remove(&message.id).unwrap_or_default(),
            ..message
        })
        .collect())
}

/// A PATCH or a tag edit in one transaction, under the session's lock (so
/// concurrent tag edits each keep theirs): the status when it differs,
/// then the tags, then the custom field values. A tag edit leaving more than 50 tags is a 400 on `add`
/// and changes nothing. Returns the session and whether anything changed
/// (then `updated_at` is now).
pub async fn update_session(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    status: Option<SessionStatus>,
    tags: &SessionTags,
    custom_fields: &FieldPatch,
) -> Result<(Session, bool), StoreError> {
    let mut tx = db.begin().await?;
    let lock = match tx.backend() {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    let current = load_session(&mut tx, tenant, id, lock).await?;
    let now = Timestamp::now();
    let mut changed = false;
    if let Some(status) = status
        && status != current.status
    {
        let closed_at = (status == SessionStatus::Closed).then_some(now);
        Query::new(
            "UPDATE chat_sessions SET status = $4, closed_at = $5 \
             WHERE id = $1 AND company_id = $2 AND mode = $3",
        )
        .bind(id)
        .bind_tenant(tenant)
        .bind(status)
        .bind(closed_at)
        .execute(&mut tx)
        .await?;
        changed = true;
    }
    let tag_change = match tags {
        SessionTags::Keep => Default::default(),
        SessionTags::Replace(wanted) => {
            tag_store::replace(&mut tx, tenant, Tagged::ChatSession, id, wanted).await?
        }
        SessionTags::Edit(edit) => {
            tag_store::edit(&mut tx, tenant, Tagged::ChatSession, id, edit).await?
        }
    };
    changed |= !tag_change.is_empty();
    let fields =
        field_store::apply(&mut tx, tenant, Recorded::ChatSession, id, custom_fields).await?;
    changed |= !fields.is_empty();
    if !changed {
        tx.commit().await?;
        return Ok((current, false));
    }
    Query::new(
        "UPDATE chat_sessions SET updated_at = $4 WHERE id = $1 AND company_id = $2 AND mode = $3",
    )
    .bind(id)
    .bind_tenant(tenant)
    .bind(now)
    .execute(&mut tx)
    .await?;
    let session = record_session(&mut tx, tenant, id).await?;
    tx.commit().await?;
    Ok((session, true))
}

/// Adds a message to an ACTIVE session. An agent message to a session with
/// a visitor email also queues the reply email (with `visitor_link`, the
/// link that continues the chat) in the same transaction. A message whose
/// `client_message_id` the session already holds is not stored again: the
/// first one is returned (even if the session has closed since).
pub async fn create_message(
    db: &Db,
    tenant: &Tenant,
    session_id: Uuid,
    new: NewMessage,
    visitor_link: Option<&str>,
    now: Timestamp,
) -> Result<Sent, SendError> {
    if let Some(client_id) = new.client_message_id.as_deref()
        && let Some(first) = message_by_client_id(db, tenant, session_id, client_id).await?
    {
        return Ok(Sent::Repeat(first));
    }
    let mut tx = db.begin().await?;
    let sender_name = match (new.sender_type, new.sender_id) {
        (SenderType::Agent, Some(agent)) => Some(agent_name(&mut tx, tenant, agent).await?),
        _ => None,
    };
    let session: Session = Query::new(format!(
        "UPDATE chat_sessions SET updated_at = $4 WHERE id = $1 AND company_id = $2 AND mode = $3 \
         RETURNING {SESSION_COLUMNS}"
    ))
    .bind(session_id)
    .bind_tenant(tenant)
    .bind(now)
    .fetch_one(&mut tx)
    .await?;
    let session = with_tags(&mut tx, session).await?;
    if session.status == SessionStatus::Closed {
        return Err(SendError::SessionClosed);
    }
    let message = Message {
        id: new_id(),
        session_id,
        body: new.body,
        sender_type: new.sender_type,
        sender_id: new.sender_id,
        sender_name,
        client_message_id: new.client_message_id,
        attachments: Vec::new(),
        created_at: now,
    };
    // A send racing this one (another node) may have stored the same
    // client message id since the check above: the index keeps one.
    let inserted = Query::new(
        "INSERT INTO chat_messages (id, session_id, company_id, mode, body, sender_type, \
         sender_id, client_message_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
         ON CONFLICT (session_id, client_message_id) DO NOTHING",
    )
    .bind(message.id)
    .bind(session_id)
    .bind_tenant(tenant)
    .bind(&message.body)
    .bind(message.sender_type.as_str())
    .bind(message.sender_id)
    .bind(message.client_message_id.as_deref())
    .bind(message.created_at)
    .rows_affected(&mut tx)
    .await?;
    if inserted == 0
        && let Some(client_id) = message.client_message_id.as_deref()
    {
        drop(tx); // rolls back: the racing send holds the message
        let first = message_by_client_id(db, tenant, session_id, client_id).await?;
        return first
            .map(Sent::Repeat)
            .ok_or(SendError::Store(StoreError::NotFound));
    }
    let owner = Owner::Message {
        id: message.id,
        session: session_id,
        session_only: new.visitor_uploads_only,
    };
    attachment_store::attach(&mut tx, tenant, owner, &new.attachment_ids, "attachmentIds").await?;
    let message = Message {
        attachments: attachment_store::of(&mut tx, owner).await?,
        ..message
    };
    if message.sender_type == SenderType::Agent
        && let Some(link) = visitor_link
        && let Some(email) = agent_reply_email(&session, &message, link)
    {
        mail::queue(&mut tx, tenant, &email).await?;
    }
    if message.sender_type == SenderType::Agent {
        for (ticket, met) in sla_store::agent_chatted(&mut tx, tenant, session_id, now).await? {
            crate::tickets::store::record_sla(&mut tx, tenant, ticket, &met).await?;
        }
    }
    // The message touched the session (`updatedAt`): the feed carries both.
    let change = RecordChange::upsert(RecordType::ChatSession, session.id, &session)?;
    events::record_change(&mut tx, tenant, &change).await?;
    let change = RecordChange::upsert(RecordType::ChatMessage, message.id, &message)?;
    events::record_change(&mut tx, tenant, &change).await?;
    tx.commit().await?;
    Ok(Sent::New {
        session: Box::new(session),
        message,
    })
}

/// The message of session `session_id` sent with `client_id`, if any.
async fn message_by_client_id(
    db: &Db,
    tenant: &Tenant,
    session_id: Uuid,
    client_id: &str,
) -> Result<Option<Message>, StoreError> {
    let message: Option<Message> = Query::new(MESSAGE_SELECT)
        .push(" WHERE m.session_id = ")
        .push_bind(session_id)
        .push(" AND m.client_message_id = ")
        .push_bind(client_id)
        .push(" AND ")
        .push_tenant(tenant, "m")
        .fetch_optional(db)
        .await?;
    match message {
        Some(message) => Ok(with_attachments(db, vec![message]).await?.pop()),
        None => Ok(None),
    }
}

/// The name of the agent `id` (a message's `senderId`), which must be a
/// user of the company.
async fn agent_name(tx: &mut Tx, tenant: &Tenant, id: Uuid) -> Result<String, StoreError> {
    let name: Option<String> =
        Query::new("SELECT name FROM users WHERE id = $1 AND company_id = $2")
            .bind(id)
            .bind(tenant.company_id)
            .fetch_column(tx)
            .await?
            .pop();
    name.ok_or_else(|| Table::Users.invalid_reference("senderId"))
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
    // The anchor's time, read first: the page query compares with it.
    let in_scope = |query: Query| match scope {
        ReplayScope::Session(id) => query.push(" AND m.session_id = ").push_bind(id),
        ReplayScope::Entity(id) => query
            .push(" AND m.session_id IN (SELECT s.id FROM chat_sessions s WHERE s.entity_id = ")
            .push_bind(id)
            .push(" AND ")
            .push_tenant(tenant, "s")
            .push(")"),
    };
    let anchor: Timestamp = in_scope(
        Query::new("SELECT m.created_at FROM chat_messages m WHERE m.id = ")
            .push_bind(since)
            .push(" AND ")
            .push_tenant(tenant, "m"),
    )
    .fetch_scalar(db)
    .await?;
    let mut page = in_scope(
        Query::new(MESSAGE_SELECT)
            .push(" WHERE ")
            .push_tenant(tenant, "m"),
    );
    let after = page.placeholder_for(anchor);
    let since = page.placeholder_for(since);
    let messages = page
        .push(&format!(
            " AND (m.created_at > {after} OR (m.created_at = {after} AND m.id > {since})) \
         ORDER BY m.created_at, m.id LIMIT "
        ))
        .push_bind(limit)
        .fetch_all(db)
        .await?;
    with_attachments(db, messages).await
}

/// Marks the email of the session holding confirmation `hash` as
/// confirmed and forgets the hash, so the link works once. None when no
/// session holds it (unknown, or already used).
pub async fn confirm_visitor_email(
    db: &Db,
    hash: &str,
) -> Result<Option<(Tenant, Session)>, StoreError> {
    let mut tx = db.begin().await?;
    let row: Option<(Uuid, Uuid, crate::auth::Mode)> = Query::new(
        "UPDATE chat_sessions SET email_verified = $2, email_confirmation_hash = NULL, \
         updated_at = $3 WHERE email_confirmation_hash = $1 RETURNING id, company_id, mode",
    )
    .bind(hash)
    .bind(true)
    .bind(Timestamp::now())
    .fetch_optional(&mut tx)
    .await?;
    let Some((id, company_id, mode)) = row else {
        return Ok(None);
    };
    let tenant = Tenant { company_id, mode };
    let session = record_session(&mut tx, &tenant, id).await?;
    tx.commit().await?;
    Ok(Some((tenant, session)))
}

/// The sessions of a verified visitor (`external_id`) in one entity,
/// newest first, at most `limit`.
pub async fn visitor_sessions(
    db: &Db,
    tenant: &Tenant,
    entity_id: Uuid,
    external_id: &str,
    limit: i64,
) -> Result<Vec<Session>, StoreError> {
    Query::new(format!(
        "SELECT {SESSION_COLUMNS} FROM chat_sessions WHERE "
    ))
    .push_tenant(tenant, "")
    .push(" AND entity_id = ")
    .push_bind(entity_id)
    .push(" AND visitor_external_id = ")
    .push_bind(external_id)
    .push(" AND visitor_verified = ")
    .push_bind(true)
    .push(" ORDER BY created_at DESC, id DESC LIMIT ")
    .push_bind(limit)
    .fetch_all(db)
    .await
}
