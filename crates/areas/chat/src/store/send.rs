//! Sending a message to a chat session: stored once per client message id,
//! with its attachments, the visitor's reply email and the SLA clocks an
//! agent's answer meets.

use futures::future::BoxFuture;
use uuid::Uuid;

use super::{MESSAGE_SELECT, SESSION_COLUMNS, with_attachments};
use crate::attachments::links::Signer;
use crate::attachments::store::{self as attachment_store, Owner};
use crate::auth::Tenant;
use crate::db::{Db, On, Query, Table, TeamOwned, Tx};
use crate::error::StoreError;
use crate::events;
use crate::events::{RecordChange, RecordType};
use crate::mail;
use crate::model::{Message, NewMessage, SenderType, Session, SessionStatus, agent_reply_email};
use crate::sla::clocks::store::{self as sla_store, Met};
use crate::tags::store::{self as tag_store, Tagged};
use crate::time::{Timestamp, new_id};

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

/// What an agent's answer does to a ticket opened from its session: records
/// the SLA targets it met. A write of the tickets area, which the chat area
/// cannot name: the sequence that sends a message passes it in, and it runs
/// in the message's transaction.
pub trait AnsweredTickets: Sync {
    fn record<'a>(
        &'a self,
        tx: &'a mut Tx,
        ticket: Uuid,
        met: &'a [Met],
    ) -> BoxFuture<'a, Result<(), StoreError>>;
}

/// Why a message was not sent.
#[derive(Debug)]
pub enum SendError {
    /// The session is CLOSED (409 `session_closed`).
    SessionClosed,
    Store(StoreError),
}

impl From<SendError> for crate::error::ApiError {
    fn from(err: SendError) -> Self {
        match err {
            SendError::SessionClosed => crate::error::ApiError::new(
                axum::http::StatusCode::CONFLICT,
                crate::error::ErrorCode::SessionClosed,
                "The chat session is closed",
            ),
            SendError::Store(err) => err.into(),
        }
    }
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

/// `session` with its tags read.
async fn with_tags<'c>(on: impl Into<On<'c>>, mut session: Session) -> Result<Session, StoreError> {
    session.tags = tag_store::of(on, Tagged::ChatSession, session.id).await?;
    Ok(session)
}

/// What an agent's message does beyond the chat, in its transaction.
pub struct AgentReply<'a> {
    /// The link that continues the chat, for the reply email to a session
    /// with a visitor email (none: no email).
    pub visitor_link: Option<&'a str>,
    /// Records the SLA targets the message meets on each ticket opened from
    /// the session.
    pub tickets: &'a dyn AnsweredTickets,
}

/// Adds a message to an ACTIVE session. An agent message to a session with
/// a visitor email also queues the reply email in the same transaction, and
/// records the SLA targets it meets on the session's tickets (`reply`: a
/// write of the tickets area, which the sequence that sends a message passes
/// in, `sequences::chat_message`). A message whose `client_message_id` the
/// session already holds is not stored again: the first one is returned
/// (even if the session has closed since).
pub async fn create_message(
    db: &Db,
    tenant: &Tenant,
    session_id: Uuid,
    new: NewMessage,
    reply: AgentReply<'_>,
    now: Timestamp,
    signer: &Signer,
) -> Result<Sent, SendError> {
    if let Some(client_id) = new.client_message_id.as_deref()
        && let Some(first) = message_by_client_id(db, tenant, session_id, client_id, signer).await?
    {
        return Ok(Sent::Repeat(first));
    }
    let mut tx = db.begin().await?;
    let sender_name = match (new.sender_type, new.sender_id) {
        (SenderType::Agent, Some(agent)) => Some(agent_name(&mut tx, tenant, agent).await?),
        _ => None,
    };
    let session: Session = Query::new(
        "UPDATE chat_sessions SET updated_at = $4, version = version + 1 \
         WHERE id = $1 AND company_id = $2 AND mode = $3",
    )
    .bind(session_id)
    .bind_tenant(tenant)
    .bind(now)
    .push_teams(tenant, "team_id")
    .push(&format!(" RETURNING {SESSION_COLUMNS}"))
    .fetch_one(&mut tx)
    .await?;
    // The UPDATE above holds the row and grew its version by one.
    if let Some(expected) = new.expected_version
        && session.version != expected + 1
    {
        let current = session.version - 1;
        return Err(SendError::Store(StoreError::VersionConflict { current }));
    }
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
        let first = message_by_client_id(db, tenant, session_id, client_id, signer).await?;
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
        attachments: attachment_store::of(&mut tx, owner, signer).await?,
        ..message
    };
    if message.sender_type == SenderType::Agent
        && let Some(link) = reply.visitor_link
        && let Some(email) = agent_reply_email(&session, &message, link)
    {
        mail::queue(&mut tx, tenant, &email).await?;
    }
    if message.sender_type == SenderType::Agent {
        for (ticket, met) in sla_store::agent_chatted(&mut tx, tenant, session_id, now).await? {
            reply.tickets.record(&mut tx, ticket, &met).await?;
        }
    }
    // The message touched the session (`updatedAt`): the feed carries both.
    let change = RecordChange::upsert(RecordType::ChatSession, session.id, &session)?;
    events::record_change(&mut tx, tenant, &change, now).await?;
    let change = RecordChange::upsert(RecordType::ChatMessage, message.id, &message)?;
    events::record_change(&mut tx, tenant, &change, now).await?;
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
    signer: &Signer,
) -> Result<Option<Message>, StoreError> {
    let message: Option<Message> = Query::new(MESSAGE_SELECT)
        .push(" WHERE m.session_id = ")
        .push_bind(session_id)
        .push(" AND m.client_message_id = ")
        .push_bind(client_id)
        .push(" AND ")
        .push_tenant(tenant, "m")
        .push_visible_or_none(tenant, TeamOwned::ChatSession, "m.session_id")
        .fetch_optional(db)
        .await?;
    match message {
        Some(message) => Ok(with_attachments(db, vec![message], signer).await?.pop()),
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
