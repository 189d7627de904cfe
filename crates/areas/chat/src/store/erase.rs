//! Erasing a person from their chats, a batch at a time (each batch its
//! own short transaction, run by the erasure sequence): their messages
//! become the marker, agents' messages lose the person's words, the
//! session's fields that name them are emptied (the name becomes the
//! marker: a session always has one), their files' rows go (the caller
//! releases the bytes after the commit), and each session's search
//! document is written again. A session is released from the contact as it
//! is erased, so the next batch takes the next sessions.

use uuid::Uuid;

use crate::attachments::cleanup::{Sent, erase_sent};
use crate::auth::Tenant;
use crate::db::{Backend, Db, Query, Tx};
use crate::erasure::{Column, MARKER, Person, scrub_rows};
use crate::error::StoreError;

/// What one batch erased.
#[derive(Debug, Clone, Default)]
pub struct ErasedChats {
    pub sessions: Vec<Uuid>,
    /// Every message of those sessions (the change feed names them).
    pub messages: Vec<Uuid>,
    /// The SHA-256s of the files whose rows went.
    pub files: Vec<String>,
}

/// How many chats contact `contact` has.
pub async fn count_of_contact(db: &Db, tenant: &Tenant, contact: Uuid) -> Result<i64, StoreError> {
    Query::new("SELECT count(*) FROM chat_sessions s WHERE s.contact_id = ")
        .push_bind(contact)
        .push(" AND ")
        .push_tenant(tenant, "s")
        .fetch_scalar(db)
        .await
}

/// Erases `person` from up to `limit` of contact `contact`'s chats in `tx`.
pub async fn erase_batch(
    tx: &mut Tx,
    tenant: &Tenant,
    contact: Uuid,
    person: &Person,
    limit: i64,
) -> Result<ErasedChats, StoreError> {
    let sessions: Vec<Uuid> = Query::new("SELECT s.id FROM chat_sessions s WHERE s.contact_id = ")
        .push_bind(contact)
        .push(" AND ")
        .push_tenant(tenant, "s")
        .push(" ORDER BY s.id LIMIT ")
        .push_bind(limit)
        .fetch_column(&mut *tx)
        .await?;
    if sessions.is_empty() {
        return Ok(ErasedChats::default());
    }
    let theirs: Vec<Uuid> =
        Query::new("SELECT id FROM chat_messages WHERE sender_type = 'visitor' AND session_id IN ")
            .push_bind_list(sessions.iter().copied())
            .fetch_column(&mut *tx)
            .await?;
    let all: Vec<Uuid> = Query::new("SELECT id FROM chat_messages WHERE session_id IN ")
        .push_bind_list(sessions.iter().copied())
        .fetch_column(&mut *tx)
        .await?;
    let sent = Sent {
        messages: &theirs,
        sessions: &sessions,
        ..Sent::default()
    };
    let files = erase_sent(tx, tenant, &sent).await?;
    if !theirs.is_empty() {
        Query::new("UPDATE chat_messages SET body = $1 WHERE id IN ")
            .bind(MARKER)
            .push_bind_list(theirs.iter().copied())
            .execute(&mut *tx)
            .await?;
    }
    let messages = [Column::text("body")];
    scrub_rows(
        tx,
        "chat_messages",
        "id",
        "session_id",
        &sessions,
        &messages,
        person,
    )
    .await?;
    Query::new(
        "UPDATE chat_sessions SET visitor_name = $1, visitor_email = NULL, \
         visitor_external_id = NULL, email_confirmation_hash = NULL, contact_id = NULL \
         WHERE id IN ",
    )
    .bind(MARKER)
    .push_bind_list(sessions.iter().copied())
    .execute(&mut *tx)
    .await?;
    let fields = [Column::json("custom_fields")];
    scrub_rows(tx, "chat_sessions", "id", "id", &sessions, &fields, person).await?;
    for session in &sessions {
        reindex_messages(tx, *session).await?;
    }
    Ok(ErasedChats {
        sessions,
        messages: all,
        files,
    })
}

/// Writes again the message text of session `id`'s search document from
/// its messages as they now are (oldest first, capped as the trigger caps
/// it): the trigger follows inserts only.
async fn reindex_messages(tx: &mut Tx, id: Uuid) -> Result<(), StoreError> {
    let sql = match tx.backend() {
        Backend::Postgres => {
            "UPDATE chat_session_search SET message_text = left(coalesce((SELECT \
             string_agg(m.body, ' ' ORDER BY m.created_at, m.id) FROM chat_messages m \
             WHERE m.session_id = $1), ''), 100000) WHERE session_id = $1"
        }
        Backend::Sqlite => {
            "UPDATE chat_session_search SET message_text = substr(coalesce((SELECT \
             group_concat(body, ' ') FROM (SELECT m.body FROM chat_messages m \
             WHERE m.session_id = $1 ORDER BY m.created_at, m.id)), ''), 1, 100000) \
             WHERE session_id = $1"
        }
    };
    Query::new(sql).bind(id).execute(tx).await
}

/// Merges the segments of SQLite's full-text index, so the terms of
/// erased text leave its pages too (a delete only marks them); Postgres
/// rebuilds a row's vector as the row changes.
pub async fn compact_search(db: &Db) -> Result<(), StoreError> {
    if db.backend() == Backend::Sqlite {
        Query::new(
            "INSERT INTO chat_session_search_fts (chat_session_search_fts) VALUES ('optimize')",
        )
        .execute(db)
        .await?;
    }
    Ok(())
}
