//! SQL for ratings and rating requests. A submission (`rate`) checks its
//! chat or ticket, the entity's setting and the change window, writes the
//! rating and records `csat.submitted` / `csat.updated` in one transaction.

mod rate;

pub use rate::{RatedRecord, rate};

use uuid::Uuid;

use super::model::{CsatMode, CsatSummary, Rating, RatingFilter, RatingTarget, Refusal};
use crate::auth::{Mode, Tenant};
use crate::db::{Db, IdLists, On, Query, Tx};
use crate::error::StoreError;
use crate::mail::{self, Email};
use crate::paging::{After, Order, Total, push_after};
use crate::time::Timestamp;
use crate::validate::Page;

/// Why a submission or a request did not happen.
#[derive(Debug)]
pub enum RateError {
    Refused(Refusal),
    Store(StoreError),
}

impl From<StoreError> for RateError {
    fn from(err: StoreError) -> Self {
        RateError::Store(err)
    }
}

/// Whether a submission created the rating or changed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Submitted {
    Created,
    Updated,
}

/// A rating's columns, its agent's name by a subquery (so the same list
/// serves a SELECT and a RETURNING, whose table cannot be joined).
const RATING_COLUMNS: &str = "id, entity_id, chat_session_id, ticket_id, score, comment, \
     agent_id, (SELECT u.name FROM users u WHERE u.id = agent_id) AS agent_name, \
     created_at, updated_at";

/// A rated record as a submission needs it.
#[derive(sqlx::FromRow)]
struct Subject {
    entity_id: Uuid,
    status: String,
    csat: CsatMode,
    requested_at: Option<Timestamp>,
    /// A ticket's: the chat it came from (whose visitor may rate it).
    chat_session_id: Option<Uuid>,
    /// A ticket's: who gets the rating link.
    visitor_email: Option<String>,
    ticket_number: Option<String>,
    subject: Option<String>,
    /// The chat's or ticket's assignee: the agent a first rating names.
    assignee_id: Option<Uuid>,
}

impl Subject {
    fn finished(&self, target: RatingTarget) -> bool {
        match target {
            RatingTarget::Chat(_) => self.status == "CLOSED",
            RatingTarget::Ticket(_) => self.status == "RESOLVED" || self.status == "CLOSED",
        }
    }
}

async fn subject<'c>(
    on: impl Into<On<'c>>,
    tenant: &Tenant,
    target: RatingTarget,
) -> Result<Subject, StoreError> {
    let sql = match target {
        RatingTarget::Chat(_) => {
            "SELECT s.entity_id, s.status, e.csat, r.requested_at, \
             CAST(NULL AS TEXT) AS visitor_email, CAST(NULL AS TEXT) AS ticket_number, \
             CAST(NULL AS TEXT) AS subject, s.id AS chat_session_id, s.assignee_id \
             FROM chat_sessions s JOIN entities e ON e.id = s.entity_id \
             LEFT JOIN rating_requests r ON r.record_id = s.id WHERE s.id = "
        }
        RatingTarget::Ticket(_) => {
            "SELECT s.entity_id, s.status, e.csat, r.requested_at, s.visitor_email, \
             s.ticket_number, s.subject, s.chat_session_id, s.assigned_to_id AS assignee_id \
             FROM tickets s JOIN entities e ON e.id = s.entity_id \
             LEFT JOIN rating_requests r ON r.record_id = s.id WHERE s.id = "
        }
    };
    // Both tables carry their team: a record outside the teams a caller is
    // limited to is NotFound.
    Query::new(sql)
        .push_bind(target.id())
        .push(" AND ")
        .push_tenant_in_teams(tenant, "s", "team_id")
        .fetch_one(on)
        .await
}

/// The company and mode of a chat session or ticket, for a signed link
/// (which names the record only); None when it does not exist.
pub async fn tenant_of(db: &Db, target: RatingTarget) -> Result<Option<Tenant>, StoreError> {
    #[derive(sqlx::FromRow)]
    struct Row {
        company_id: Uuid,
        mode: Mode,
    }
    let sql = match target {
        RatingTarget::Chat(_) => "SELECT company_id, mode FROM chat_sessions WHERE id = $1",
        RatingTarget::Ticket(_) => "SELECT company_id, mode FROM tickets WHERE id = $1",
    };
    let row: Option<Row> = Query::new(sql).bind(target.id()).fetch_optional(db).await?;
    Ok(row.map(|row| Tenant::new(row.company_id, row.mode)))
}

/// The chat session a ticket came from (None: not from a chat); NotFound
/// when the ticket is not the tenant's.
pub async fn ticket_chat(
    db: &Db,
    tenant: &Tenant,
    ticket_id: Uuid,
) -> Result<Option<Uuid>, StoreError> {
    Ok(subject(db, tenant, RatingTarget::Ticket(ticket_id))
        .await?
        .chat_session_id)
}

/// The `csat` setting of an entity of the company.
pub async fn mode_of<'c>(
    on: impl Into<On<'c>>,
    company_id: Uuid,
    entity_id: Uuid,
) -> Result<CsatMode, StoreError> {
    Query::new("SELECT csat FROM entities WHERE id = $1 AND company_id = $2")
        .bind(entity_id)
        .bind(company_id)
        .fetch_scalar(on)
        .await
}

/// Refuses a rating (or, with `submitting` false, a request) that the
/// record's state or its entity's setting does not allow.
fn check_open(rated: &Subject, target: RatingTarget, submitting: bool) -> Result<(), RateError> {
    let refusal = if rated.csat == CsatMode::Off {
        Some(Refusal::Off)
    } else if !rated.finished(target) {
        Some(Refusal::NotFinished)
    } else if submitting && rated.csat == CsatMode::Manual && rated.requested_at.is_none() {
        Some(Refusal::NotRequested)
    } else {
        None
    };
    refusal.map_or(Ok(()), |r| Err(RateError::Refused(r)))
}

/// What a rating request did.
#[derive(Debug, Clone)]
pub struct Requested {
    pub entity_id: Uuid,
    pub requested_at: Timestamp,
    /// Whether the ticket's visitor was mailed the rating link.
    pub email_sent: bool,
}

/// Makes a rating of a closed chat or resolved ticket possible (in manual
/// mode; in auto mode it already is) and, for a ticket with a visitor
/// email, queues the email with `link` in the same transaction. Asking
/// again asks again (a new email).
pub async fn request(
    db: &Db,
    tenant: &Tenant,
    target: RatingTarget,
    link: &str,
    now: Timestamp,
) -> Result<Requested, RateError> {
    let mut tx = db.begin().await?;
    let rated = subject(&mut tx, tenant, target).await?;
    check_open(&rated, target, false)?;
    Query::new(
        "INSERT INTO rating_requests (record_id, company_id, mode, requested_at) \
         VALUES ($1, $2, $3, $4) ON CONFLICT (record_id) DO UPDATE SET requested_at = $4",
    )
    .bind(target.id())
    .bind_tenant(tenant)
    .bind(now)
    .execute(&mut tx)
    .await?;
    let email_sent = match (target, &rated.visitor_email) {
        (RatingTarget::Ticket(_), Some(to)) => {
            queue_email(&mut tx, tenant, &rated, to, link).await?;
            true
        }
        _ => false,
    };
    tx.commit().await?;
    Ok(Requested {
        entity_id: rated.entity_id,
        requested_at: now,
        email_sent,
    })
}

async fn queue_email(
    tx: &mut Tx,
    tenant: &Tenant,
    rated: &Subject,
    to: &str,
    link: &str,
) -> Result<(), StoreError> {
    let number = rated.ticket_number.as_deref().unwrap_or_default();
    let subject = rated.subject.as_deref().unwrap_or_default();
    let email = Email {
        to: to.to_string(),
        subject: format!("[{number}] How did we do? {subject}"),
        text: format!(
            "Hello,\n\nYour request \"{subject}\" ({number}) was resolved. Would you tell us \
             how satisfied you are with the help you got?\n\nRate it here: {link}\n"
        ),
        html: None,
    };
    mail::queue(tx, tenant, &email).await
}

/// A page of the tenant's ratings matching `filter`, newest first, read
/// with one row more than `page.limit`, and their number.
pub async fn list(
    db: &Db,
    tenant: &Tenant,
    filter: &RatingFilter,
    page: Page,
    after: Option<&After>,
) -> Result<(Vec<Rating>, Total), StoreError> {
    let matching = |select: &str| {
        let mut query = Query::new(select)
            .push(" FROM ratings r WHERE ")
            .push_tenant(tenant, "r");
        if let Some(entity) = filter.entity_id {
            query = query.push(" AND r.entity_id = ").push_bind(entity);
        }
        if let Some(from) = filter.from {
            query = query.push(" AND r.created_at >= ").push_bind(from);
        }
        if let Some(to) = filter.to {
            query = query.push(" AND r.created_at < ").push_bind(to);
        }
        if let Some(score) = filter.score {
            query = query.push(" AND r.score = ").push_bind(score);
        }
        query
    };
    // Unqualified: `ratings r` is the only table the columns can name.
    let rows: Vec<Rating> = push_after(
        matching(&format!("SELECT {RATING_COLUMNS}")),
        "r",
        after,
        Order::NewestFirst,
    )
    .push(" ORDER BY r.created_at DESC, r.id DESC LIMIT ")
    .push_bind(page.limit + 1)
    .push(" OFFSET ")
    .push_bind(page.offset)
    .fetch_all(db)
    .await?;
    let total: i64 = matching("SELECT COUNT(*)").fetch_scalar(db).await?;
    Ok((rows, Total::exact(total)))
}

/// The CSAT figures of ratings first submitted in `[from, to)`, of one
/// entity or all.
pub async fn summary(
    db: &Db,
    tenant: &Tenant,
    entity_id: Option<Uuid>,
    from: Timestamp,
    to: Timestamp,
) -> Result<CsatSummary, StoreError> {
    #[derive(sqlx::FromRow)]
    struct Row {
        score: i64,
        n: i64,
    }
    let mut query = Query::new("SELECT r.score, COUNT(*) AS n FROM ratings r WHERE ")
        .push_tenant(tenant, "r")
        .push(" AND r.created_at >= ")
        .push_bind(from)
        .push(" AND r.created_at < ")
        .push_bind(to);
    if let Some(entity) = entity_id {
        query = query.push(" AND r.entity_id = ").push_bind(entity);
    }
    let rows: Vec<Row> = query.push(" GROUP BY r.score").fetch_all(db).await?;
    let counts: Vec<(i64, i64)> = rows.into_iter().map(|r| (r.score, r.n)).collect();
    Ok(CsatSummary::from_counts(&counts))
}

/// Clears the comments of the tenant's ratings of `tickets` and `sessions`
/// (the words of a person being erased; the scores stay, they name no
/// one), in `tx`.
pub async fn erase_comments(
    tx: &mut Tx,
    tenant: &Tenant,
    tickets: &[Uuid],
    sessions: &[Uuid],
) -> Result<u64, StoreError> {
    let head = Query::new("UPDATE ratings SET comment = NULL WHERE comment IS NOT NULL AND ");
    IdLists::tickets_and_chats(tickets, sessions)
        .rows_affected(tx, &head, tenant)
        .await
}

/// The tenant's ratings of `tickets` and `sessions`, oldest first (a
/// person's export).
pub async fn of_records(
    db: &Db,
    tenant: &Tenant,
    tickets: &[Uuid],
    sessions: &[Uuid],
) -> Result<Vec<Rating>, StoreError> {
    let head = Query::new(format!("SELECT {RATING_COLUMNS} FROM ratings r WHERE "));
    let mut ratings = Vec::new();
    for statement in IdLists::tickets_and_chats(tickets, sessions).statements(&head, tenant, "r") {
        let rows: Vec<Rating> = statement
            .push(" ORDER BY r.created_at, r.id")
            .fetch_all(db)
            .await?;
        ratings.extend(rows);
    }
    Ok(ratings)
}
