//! SQL for tickets, their comments and their timeline. Every change runs in
//! one transaction with its timeline entry, its events and its emails, so a
//! committed change always has them and a rolled-back one never does.

mod activities;
mod comments;

pub use activities::list_activities;
use activities::{NewActivity, add_activity};
pub use comments::{add_comment, list_comments};

use serde_json::json;
use sqlx::AssertSqlSafe;
use uuid::Uuid;

use super::events;
use super::model::{
    ActivityKind, Escalation, NewTicket, Priority, Ticket, TicketFilter, TicketState, TicketStatus,
    TicketUpdate, UserRef, ticket_number,
};
use crate::auth::Tenant;
use crate::db::{Backend, Db, Tx};
use crate::error::StoreError;
use crate::time::{Timestamp, new_id};
use crate::validate::Page;
use crate::{entities, on_db, on_tx, users};

/// A ticket with its assignee, in one read (no query per row).
const TICKET_SELECT: &str = "SELECT t.id, t.ticket_number, t.subject, t.description, t.status, \
     t.priority, t.entity_id, t.visitor_email, t.assigned_to_id, u.name AS assignee_name, \
     u.email AS assignee_email, t.resolved_at, t.created_at, t.updated_at \
     FROM tickets t LEFT JOIN users u ON u.id = t.assigned_to_id";

const BY_ID: &str = " WHERE t.id = $1 AND t.company_id = $2 AND t.mode = $3";

#[derive(sqlx::FromRow)]
struct TicketRow {
    id: Uuid,
    ticket_number: String,
    subject: String,
    description: Option<String>,
    status: TicketStatus,
    priority: Priority,
    entity_id: Uuid,
    visitor_email: Option<String>,
    assigned_to_id: Option<Uuid>,
    assignee_name: Option<String>,
    assignee_email: Option<String>,
    resolved_at: Option<Timestamp>,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl From<TicketRow> for Ticket {
    fn from(row: TicketRow) -> Self {
        let assigned_to = user_ref(row.assigned_to_id, row.assignee_name, row.assignee_email);
        Ticket {
            id: row.id,
            ticket_number: row.ticket_number,
            subject: row.subject,
            description: row.description,
            status: row.status,
            priority: row.priority,
            entity_id: row.entity_id,
            visitor_email: row.visitor_email,
            assigned_to_id: row.assigned_to_id,
            assigned_to,
            resolved_at: row.resolved_at,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

fn user_ref(id: Option<Uuid>, name: Option<String>, email: Option<String>) -> Option<UserRef> {
    match (id, name, email) {
        (Some(id), Some(name), Some(email)) => Some(UserRef { id, name, email }),
        _ => None,
    }
}

/// Creates a ticket (OPEN) with the next number of the tenant, its
/// `created` timeline entry, `ticket.created` and the visitor's email.
pub async fn create(db: &Db, tenant: &Tenant, new: NewTicket) -> Result<Ticket, StoreError> {
    entities::store::ensure_belongs(db, tenant.company_id, new.entity_id, "entityId").await?;
    let mut tx = db.begin().await?;
    let number = ticket_number(next_number(&mut tx, tenant).await?);
    let id = new_id();
    let now = Timestamp::now();
    on_tx!(&mut tx, c => sqlx::query(
        "INSERT INTO tickets (id, company_id, mode, entity_id, ticket_number, subject, \
         description, status, priority, visitor_email, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)")
        .bind(id)
        .bind(tenant.company_id)
        .bind(tenant.mode.as_str())
        .bind(new.entity_id)
        .bind(&number)
        .bind(&new.subject)
        .bind(&new.description)
        .bind(TicketStatus::Open)
        .bind(new.priority)
        .bind(&new.visitor_email)
        .bind(now)
        .execute(c)
        .await?
        .rows_affected());
    let entry = NewActivity {
        to: Some(TicketStatus::Open.to_string()),
        details: Some(json!({"ticketNumber": number, "priority": new.priority})),
        ..NewActivity::new(ActivityKind::Created)
    };
    add_activity(&mut tx, tenant, id, entry, now).await?;
    let ticket = load(&mut tx, tenant, id).await?;
    events::created(&mut tx, tenant, &ticket).await?;
    tx.commit().await?;
    Ok(ticket)
}

/// The next value of the tenant's ticket sequence. The counter row stays
/// locked until the caller's transaction ends, so concurrent creates (on any
/// node) take turns: no duplicates, and a rollback gives the number back.
async fn next_number(tx: &mut Tx, tenant: &Tenant) -> Result<i64, StoreError> {
    Ok(on_tx!(tx, c => sqlx::query_scalar::<_, i64>(
        "INSERT INTO counters (company_id, mode, name, value) VALUES ($1, $2, 'ticket', 1) \
         ON CONFLICT (company_id, mode, name) DO UPDATE SET value = counters.value + 1 \
         RETURNING value")
        .bind(tenant.company_id)
        .bind(tenant.mode.as_str())
        .fetch_one(c)
        .await?))
}

/// The ticket `id` of the tenant; another tenant's is NotFound.
pub async fn find(db: &Db, tenant: &Tenant, id: Uuid) -> Result<Ticket, StoreError> {
    let sql = format!("{TICKET_SELECT}{BY_ID}");
    let row = on_db!(db, c => sqlx::query_as::<_, TicketRow>(AssertSqlSafe(sql))
        .bind(id).bind(tenant.company_id).bind(tenant.mode.as_str())
        .fetch_one(c).await?);
    Ok(row.into())
}

/// `find` inside a transaction (to answer with what was just written).
async fn load(tx: &mut Tx, tenant: &Tenant, id: Uuid) -> Result<Ticket, StoreError> {
    let sql = format!("{TICKET_SELECT}{BY_ID}");
    let row = on_tx!(tx, c => sqlx::query_as::<_, TicketRow>(AssertSqlSafe(sql))
        .bind(id).bind(tenant.company_id).bind(tenant.mode.as_str())
        .fetch_one(c).await?);
    Ok(row.into())
}

/// The WHERE clause for `filter`: only the filters given, so that each
/// combination matches its index in 0004_tickets.sql exactly.
fn filter_clause(filter: &TicketFilter) -> (String, usize) {
    let mut sql = String::from(" WHERE t.company_id = $1 AND t.mode = $2");
    let mut n = 2;
    let given = [
        ("entity_id", filter.entity_id.is_some()),
        ("status", filter.status.is_some()),
        ("priority", filter.priority.is_some()),
        ("assigned_to_id", filter.assigned_to_id.is_some()),
    ];
    for (column, present) in given {
        if present {
            n += 1;
            sql.push_str(&format!(" AND t.{column} = ${n}"));
        }
    }
    (sql, n)
}

/// Binds the tenant and the given filters, in `filter_clause`'s order.
macro_rules! bind_filter {
    ($query:expr, $tenant:expr, $filter:expr) => {{
        let mut q = $query.bind($tenant.company_id).bind($tenant.mode.as_str());
        if let Some(v) = $filter.entity_id {
            q = q.bind(v);
        }
        if let Some(v) = $filter.status {
            q = q.bind(v);
        }
        if let Some(v) = $filter.priority {
            q = q.bind(v);
        }
        if let Some(v) = $filter.assigned_to_id {
            q = q.bind(v);
        }
        q
    }};
}

/// The page query of `list` for `filter`. Its binds: company id, mode, the
/// given filters in field order, limit, offset. Public for the test that
/// checks every filter combination reads an index in order.
#[doc(hidden)]
pub fn list_sql(filter: &TicketFilter) -> String {
    let (clause, n) = filter_clause(filter);
    format!(
        "{TICKET_SELECT}{clause} ORDER BY t.created_at DESC, t.id DESC LIMIT ${} OFFSET ${}",
        n + 1,
        n + 2
    )
}

/// One page of the tenant's tickets, newest first (id breaks ties), and
/// the total matching `filter`: one query for the page, one for the count.
pub async fn list(
    db: &Db,
    tenant: &Tenant,
    filter: &TicketFilter,
    page: Page,
) -> Result<(Vec<Ticket>, i64), StoreError> {
    let (clause, _) = filter_clause(filter);
    let sql = list_sql(filter);
    let rows = on_db!(db, c => bind_filter!(
            sqlx::query_as::<_, TicketRow>(AssertSqlSafe(sql)), tenant, filter)
        .bind(page.limit).bind(page.offset).fetch_all(c).await?);
    let count = format!("SELECT COUNT(*) FROM tickets t{clause}");
    let total = on_db!(db, c => bind_filter!(
            sqlx::query_scalar::<_, i64>(AssertSqlSafe(count)), tenant, filter)
        .fetch_one(c).await?);
    Ok((rows.into_iter().map(Ticket::from).collect(), total))
}

/// The changeable fields of a ticket, locked until the transaction ends
/// (SQLite's write transaction already excludes other writers).
async fn lock(tx: &mut Tx, tenant: &Tenant, id: Uuid) -> Result<TicketState, StoreError> {
    let lock = match tx.backend() {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    let sql = format!(
        "SELECT status, priority, assigned_to_id, resolved_at FROM tickets \
         WHERE id = $1 AND company_id = $2 AND mode = $3{lock}"
    );
    Ok(
        on_tx!(tx, c => sqlx::query_as::<_, TicketState>(AssertSqlSafe(sql))
        .bind(id).bind(tenant.company_id).bind(tenant.mode.as_str())
        .fetch_one(c).await?),
    )
}

async fn write_state(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    state: &TicketState,
    now: Timestamp,
) -> Result<(), StoreError> {
    on_tx!(tx, c => sqlx::query(
        "UPDATE tickets SET status = $4, priority = $5, assigned_to_id = $6, resolved_at = $7, \
         updated_at = $8 WHERE id = $1 AND company_id = $2 AND mode = $3")
        .bind(id)
        .bind(tenant.company_id)
        .bind(tenant.mode.as_str())
        .bind(state.status)
        .bind(state.priority)
        .bind(state.assigned_to_id)
        .bind(state.resolved_at)
        .bind(now)
        .execute(c)
        .await?
        .rows_affected());
    Ok(())
}

/// Applies a PATCH. Only fields whose value differs count: they get a
/// timeline entry each and one `ticket.updated` with `changes` (plus
/// `ticket.resolved` and the visitor's email when it became RESOLVED); a
/// PATCH that changes nothing writes nothing and emits nothing.
pub async fn update(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    update: TicketUpdate,
) -> Result<Ticket, StoreError> {
    if let Some(Some(user)) = update.assigned_to_id {
        users::store::find_reference(db, tenant.company_id, user, "assignedToId").await?;
    }
    let mut tx = db.begin().await?;
    let current = lock(&mut tx, tenant, id).await?;
    let changes = current.diff(&update);
    if changes.is_empty() {
        let ticket = load(&mut tx, tenant, id).await?;
        tx.commit().await?;
        return Ok(ticket);
    }
    let now = Timestamp::now();
    write_state(&mut tx, tenant, id, &current.apply(&update, now), now).await?;
    for change in &changes {
        let entry = NewActivity {
            from: change.from.clone(),
            to: change.to.clone(),
            ..NewActivity::new(change.activity_kind())
        };
        add_activity(&mut tx, tenant, id, entry, now).await?;
    }
    let ticket = load(&mut tx, tenant, id).await?;
    events::updated(&mut tx, tenant, &ticket, &changes).await?;
    tx.commit().await?;
    Ok(ticket)
}

/// Escalates a ticket: IN_PROGRESS, URGENT, assigned to `to_user` (which
/// must be a user of the company: 400 on `escalateToId` otherwise), with an
/// `escalated` timeline entry and `ticket.escalated`. The API calls it with
/// `automatic: false`; escalation rules with `automatic: true` and their id.
pub async fn escalate(
    db: &Db,
    tenant: &Tenant,
    ticket_id: Uuid,
    escalation: Escalation,
) -> Result<Ticket, StoreError> {
    users::store::find_reference(db, tenant.company_id, escalation.to_user, "escalateToId").await?;
    let mut tx = db.begin().await?;
    let ticket = escalate_in(&mut tx, tenant, ticket_id, &escalation).await?;
    tx.commit().await?;
    Ok(ticket)
}

/// `escalate` inside the caller's transaction (a rule scheduler records
/// that its rule fired in the same one). The caller has checked that
/// `escalation.to_user` is a user of the tenant's company.
pub async fn escalate_in(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
    escalation: &Escalation,
) -> Result<Ticket, StoreError> {
    let current = lock(tx, tenant, ticket_id).await?;
    let update = TicketUpdate {
        status: Some(TicketStatus::InProgress),
        priority: Some(Priority::Urgent),
        assigned_to_id: Some(Some(escalation.to_user)),
    };
    let now = Timestamp::now();
    write_state(tx, tenant, ticket_id, &current.apply(&update, now), now).await?;
    let summary = events::escalation_json(escalation, current.assigned_to_id);
    let mut details = summary.clone();
    details["changes"] = events::changes_json(&current.diff(&update));
    let entry = NewActivity {
        details: Some(details),
        ..NewActivity::new(ActivityKind::Escalated)
    };
    add_activity(tx, tenant, ticket_id, entry, now).await?;
    let ticket = load(tx, tenant, ticket_id).await?;
    events::escalated(tx, tenant, &ticket, &summary).await?;
    Ok(ticket)
}

/// Deletes a ticket with its comments and timeline.
pub async fn delete(db: &Db, tenant: &Tenant, id: Uuid) -> Result<(), StoreError> {
    let deleted = on_db!(db, c => sqlx::query(
        "DELETE FROM tickets WHERE id = $1 AND company_id = $2 AND mode = $3")
        .bind(id).bind(tenant.company_id).bind(tenant.mode.as_str())
        .execute(c).await?.rows_affected());
    if deleted == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

/// NotFound unless the ticket exists for the tenant.
async fn ensure_ticket(db: &Db, tenant: &Tenant, id: Uuid) -> Result<(), StoreError> {
    let found = on_db!(db, c => sqlx::query(
        "SELECT id FROM tickets WHERE id = $1 AND company_id = $2 AND mode = $3")
        .bind(id).bind(tenant.company_id).bind(tenant.mode.as_str())
        .fetch_optional(c).await?.is_some());
    if found {
        Ok(())
    } else {
        Err(StoreError::NotFound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_clause_numbers_only_the_given_filters() {
        let filter = TicketFilter {
            status: Some(TicketStatus::Open),
            assigned_to_id: Some(Uuid::now_v7()),
            ..Default::default()
        };
        let (sql, n) = filter_clause(&filter);
        assert_eq!(
            sql,
            " WHERE t.company_id = $1 AND t.mode = $2 AND t.status = $3 \
             AND t.assigned_to_id = $4"
        );
        assert_eq!(n, 4);
    }
}
