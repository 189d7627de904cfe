//! Suggestion records: the articles suggested for a question and what came
//! of it (self-served, handed off to a human, shown to an agent).

use sqlx::types::Json;
use uuid::Uuid;

use crate::auth::Tenant;
use crate::db::{Db, IdLists, Query, Tx};
use crate::erasure::Person;
use crate::error::StoreError;
use crate::model::{NewSuggestion, Outcome, Subject, SuggestedArticle, Suggestion};
use crate::time::{Timestamp, new_id};

const COLUMNS: &str = "id, entity_id, question, articles, outcome, answered_by, \
     chat_session_id, ticket_id, created_at";

#[derive(sqlx::FromRow)]
struct Row {
    id: Uuid,
    entity_id: Uuid,
    question: String,
    articles: Json<Vec<SuggestedArticle>>,
    outcome: Outcome,
    answered_by: Option<Uuid>,
    chat_session_id: Option<Uuid>,
    ticket_id: Option<Uuid>,
    created_at: Timestamp,
}

impl From<Row> for Suggestion {
    fn from(row: Row) -> Self {
        Suggestion {
            id: row.id,
            entity_id: row.entity_id,
            question: row.question,
            articles: row.articles.0,
            outcome: row.outcome,
            answered_by: row.answered_by,
            chat_session_id: row.chat_session_id,
            ticket_id: row.ticket_id,
            created_at: row.created_at,
        }
    }
}

/// Stores one suggestion record.
pub async fn record_suggestion(
    db: &Db,
    tenant: &Tenant,
    new: NewSuggestion,
    now: Timestamp,
) -> Result<Suggestion, StoreError> {
    let row: Row = insert(new_id(), tenant, new, now)
        .push(&format!(" RETURNING {COLUMNS}"))
        .fetch_one(db)
        .await?;
    Ok(row.into())
}

/// `INSERT` of one suggestion record with id `id`.
fn insert(id: Uuid, tenant: &Tenant, new: NewSuggestion, now: Timestamp) -> Query {
    let (chat, ticket) = match new.subject {
        Subject::Visitor => (None, None),
        Subject::ChatSession(id) => (Some(id), None),
        Subject::Ticket(id) => (None, Some(id)),
    };
    Query::new(
        "INSERT INTO kb_suggestions (id, company_id, mode, entity_id, question, articles, \
         outcome, answered_by, chat_session_id, ticket_id, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(id)
    .bind_tenant(tenant)
    .bind(new.entity_id)
    .bind(new.question)
    .bind(serde_json::json!(new.articles))
    .bind(new.outcome.as_str())
    .bind(new.answered_by)
    .bind(chat)
    .bind(ticket)
    .bind(now)
}

/// The suggestion records of a chat or a ticket, oldest first.
pub async fn suggestions_of(
    db: &Db,
    tenant: &Tenant,
    subject: Subject,
) -> Result<Vec<Suggestion>, StoreError> {
    let (column, id) = match subject {
        Subject::ChatSession(id) => ("chat_session_id", id),
        Subject::Ticket(id) => ("ticket_id", id),
        Subject::Visitor => return Ok(Vec::new()),
    };
    let rows: Vec<Row> = Query::new(format!("SELECT {COLUMNS} FROM kb_suggestions WHERE "))
        .push_tenant(tenant, "")
        .push(&format!(" AND {column} = "))
        .push_bind(id)
        .push(" ORDER BY created_at, id")
        .fetch_all(db)
        .await?;
    Ok(rows.into_iter().map(Suggestion::from).collect())
}

/// Characters of a ticket's subject and description a question is made of.
pub(crate) const TICKET_QUESTION_MAX: usize = 500;

/// Articles shown to a ticket's agent.
const SHOWN: i64 = 3;

/// The record of the articles suggested for a new ticket's subject and
/// description, for its agent (none when nothing matches). Only reads.
pub async fn ticket_suggestion(
    db: &Db,
    tenant: &Tenant,
    ticket: (Uuid, Uuid),
    subject: &str,
    description: Option<&str>,
) -> Result<Option<NewSuggestion>, StoreError> {
    let (ticket_id, entity_id) = ticket;
    let question: String = format!("{subject}\n{}", description.unwrap_or_default())
        .chars()
        .take(TICKET_QUESTION_MAX)
        .collect();
    // Done, not typed: no word is a prefix.
    let question = format!("{}.", question.trim_end());
    let hits = super::suggest(db, tenant, Some(entity_id), &question, SHOWN).await?;
    if hits.is_empty() {
        return Ok(None);
    }
    Ok(Some(NewSuggestion {
        entity_id,
        question: subject.to_string(),
        articles: hits.iter().map(SuggestedArticle::from).collect(),
        outcome: Outcome::Shown,
        answered_by: None,
        subject: Subject::Ticket(ticket_id),
    }))
}

/// Stores `new` as the record `id`, in `tx`, unless it is already stored:
/// the job that keeps a ticket's suggestions gives them its own id, so a
/// second attempt of it adds nothing.
pub async fn keep_suggestion(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    new: NewSuggestion,
    now: Timestamp,
) -> Result<(), StoreError> {
    insert(id, tenant, new, now)
        .push(" ON CONFLICT (id) DO NOTHING")
        .execute(tx)
        .await
}

/// Deletes the suggestion records of a person's erased `tickets` and chat
/// `sessions`, in the erasure's transaction: their question is the
/// person's own words.
pub async fn erase_suggestions_of_records(
    tx: &mut Tx,
    tenant: &Tenant,
    tickets: &[Uuid],
    sessions: &[Uuid],
) -> Result<u64, StoreError> {
    let head = Query::new("DELETE FROM kb_suggestions WHERE ");
    IdLists::tickets_and_chats(tickets, sessions)
        .rows_affected(tx, &head, tenant)
        .await
}

/// Deletes the tenant's suggestion records whose question names `person`
/// (a visitor's question kept before any chat or ticket was opened, or
/// one whose ticket is not the person's).
pub async fn erase_suggestion_mentions(
    tx: &mut Tx,
    tenant: &Tenant,
    person: &Person,
) -> Result<u64, StoreError> {
    if person.is_empty() {
        return Ok(0);
    }
    let query = Query::new("DELETE FROM kb_suggestions WHERE ")
        .push_tenant(tenant, "")
        .push(" AND ");
    person
        .push_mentions(query, "question")
        .rows_affected(tx)
        .await
}
