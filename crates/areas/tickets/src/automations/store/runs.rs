//! SQL the passes run: which tenants have automations, each tenant's
//! trigger cursor, the firings of timed automations and the tickets they
//! are due on.

use uuid::Uuid;

use crate::auth::{Mode, Tenant};
use crate::automations::Automation;
use crate::automations::Kind;
use crate::automations::conditions::{Field, Operator};
use crate::db::{Db, Query, Tx};
use crate::error::StoreError;
use crate::model::{Priority, TicketStatus};
use crate::time::Timestamp;

#[derive(sqlx::FromRow)]
struct TenantRow {
    company_id: Uuid,
    mode: Mode,
}

/// The tenants with an enabled automation of `kind`.
pub async fn tenants_with(db: &Db, kind: Kind) -> Result<Vec<Tenant>, StoreError> {
    let rows: Vec<TenantRow> = Query::new(
        "SELECT DISTINCT a.company_id, a.mode FROM automations a WHERE a.enabled AND a.kind = ",
    )
    .push_bind(kind)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| Tenant::new(row.company_id, row.mode))
        .collect())
}

/// The feed entry the tenant's triggers ran on last; None before the
/// tenant's first trigger started it.
pub async fn cursor(db: &Db, tenant: &Tenant) -> Result<Option<i64>, StoreError> {
    let row: Option<(i64,)> = Query::new("SELECT c.seq FROM automation_cursors c WHERE ")
        .push_tenant(tenant, "c")
        .fetch_optional(db)
        .await?;
    Ok(row.map(|(seq,)| seq))
}

/// Starts the tenant's cursor at `head` unless it has one.
pub async fn start_cursor(db: &Db, tenant: &Tenant, head: i64) -> Result<(), StoreError> {
    Query::new(
        "INSERT INTO automation_cursors (company_id, mode, seq) VALUES ($1, $2, $3) \
         ON CONFLICT (company_id, mode) DO NOTHING",
    )
    .bind_tenant(tenant)
    .bind(head)
    .execute(db)
    .await
}

/// Moves the cursor from `from` to `to` in `tx`; false when another pass
/// moved it first (the entry is theirs).
pub async fn advance_cursor(
    tx: &mut Tx,
    tenant: &Tenant,
    from: i64,
    to: i64,
) -> Result<bool, StoreError> {
    let moved = Query::new(
        "UPDATE automation_cursors SET seq = $4 WHERE company_id = $1 AND mode = $2 AND seq = $3",
    )
    .bind_tenant(tenant)
    .bind(from)
    .bind(to)
    .rows_affected(tx)
    .await?;
    Ok(moved == 1)
}

/// Records that the timed automation fired on the ticket; false when it
/// had already (its condition has held since).
pub async fn claim_firing(
    tx: &mut Tx,
    tenant: &Tenant,
    automation: Uuid,
    ticket: Uuid,
    now: Timestamp,
) -> Result<bool, StoreError> {
    let claimed = Query::new(
        "INSERT INTO automation_firings (automation_id, ticket_id, company_id, mode, fired_at) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (automation_id, ticket_id) DO NOTHING",
    )
    .bind(automation)
    .bind(ticket)
    .bind_tenant(tenant)
    .bind(now)
    .rows_affected(tx)
    .await?;
    Ok(claimed == 1)
}

/// Forgets a firing: the condition turned false, so it may fire again.
pub async fn reset_firing(
    db: &Db,
    tenant: &Tenant,
    automation: Uuid,
    ticket: Uuid,
) -> Result<(), StoreError> {
    Query::new("DELETE FROM automation_firings AS f WHERE f.automation_id = ")
        .push_bind(automation)
        .push(" AND f.ticket_id = ")
        .push_bind(ticket)
        .push(" AND ")
        .push_tenant(tenant, "f")
        .execute(db)
        .await
}

/// The tickets the timed automation has fired on (and not been reset),
/// after `after` in id order: a pass pages through them all.
pub async fn fired_tickets(
    db: &Db,
    tenant: &Tenant,
    automation: Uuid,
    after: Option<Uuid>,
    limit: i64,
) -> Result<Vec<Uuid>, StoreError> {
    let mut query =
        Query::new("SELECT f.ticket_id FROM automation_firings f WHERE f.automation_id = ")
            .push_bind(automation)
            .push(" AND ")
            .push_tenant(tenant, "f");
    if let Some(after) = after {
        query = query.push(" AND f.ticket_id > ").push_bind(after);
    }
    let rows: Vec<(Uuid,)> = query
        .push(" ORDER BY f.ticket_id LIMIT ")
        .push_bind(limit)
        .fetch_all(db)
        .await?;
    Ok(rows.into_iter().map(|(id,)| id).collect())
}

/// Where a page of due tickets ends: the next page starts after it.
pub type DueCursor = (Timestamp, Uuid);

/// Tickets old enough for the timed automation, on which it has not
/// fired, oldest first, after `after`: those created, last updated and
/// last replied to by their customer at least as long ago as its
/// conditions require (through the tenant's time indexes and the
/// comments' per-ticket index), so the pass reads only tickets due by
/// `now`, to the second, however long ago it last ran. A pass pages
/// through them all, so tickets whose other conditions do not hold never
/// hide those behind them.
pub async fn due_tickets(
    db: &Db,
    tenant: &Tenant,
    automation: &Automation,
    now: Timestamp,
    after: Option<DueCursor>,
    limit: i64,
) -> Result<Vec<DueCursor>, StoreError> {
    let least = automation.conditions.least_minutes();
    let minutes = |m: i64| now.minus(std::time::Duration::from_secs(m.unsigned_abs() * 60));
    let mut query = Query::new("SELECT t.created_at, t.id FROM tickets t WHERE ")
        .push_tenant(tenant, "t")
        .push(" AND t.merged_into IS NULL");
    if let Some(m) = least.created {
        query = query.push(" AND t.created_at <= ").push_bind(minutes(m));
    }
    if let Some(m) = least.updated {
        query = query.push(" AND t.updated_at <= ").push_bind(minutes(m));
    }
    if let Some(m) = least.customer_reply {
        // A reply at least that old, and none since.
        query = query
            .push(
                " AND EXISTS (SELECT 1 FROM ticket_comments c WHERE c.ticket_id = t.id \
                 AND c.author_type = 'customer') AND NOT EXISTS (SELECT 1 FROM ticket_comments c \
                 WHERE c.ticket_id = t.id AND c.author_type = 'customer' AND c.created_at > ",
            )
            .push_bind(minutes(m))
            .push(")");
    }
    // The `is` conditions of `all` on indexed columns narrow the read to
    // the tickets they can hold for (the tenant's list indexes).
    for condition in &automation.conditions.all {
        if condition.operator != Operator::Is {
            continue;
        }
        let text = condition.value.as_str();
        query = match &condition.field {
            Field::Status => match text.and_then(|t| t.parse::<TicketStatus>().ok()) {
                Some(status) => query.push(" AND t.status = ").push_bind(status),
                None => query,
            },
            Field::Priority => match text.and_then(|t| t.parse::<Priority>().ok()) {
                Some(priority) => query.push(" AND t.priority = ").push_bind(priority),
                None => query,
            },
            Field::EntityId => match text.and_then(|t| t.parse::<Uuid>().ok()) {
                Some(entity) => query.push(" AND t.entity_id = ").push_bind(entity),
                None => query,
            },
            _ => query,
        };
    }
    if let Some((at, id)) = after {
        query = query
            .push(" AND (t.created_at > ")
            .push_bind(at)
            .push(" OR (t.created_at = ")
            .push_bind(at)
            .push(" AND t.id > ")
            .push_bind(id)
            .push("))");
    }
    let rows: Vec<(Timestamp, Uuid)> = query
        .push(
            " AND NOT EXISTS (SELECT 1 FROM automation_firings f \
             WHERE f.ticket_id = t.id AND f.automation_id = ",
        )
        .push_bind(automation.id)
        .push(") ORDER BY t.created_at, t.id LIMIT ")
        .push_bind(limit)
        .fetch_all(db)
        .await?;
    Ok(rows)
}

/// The tenant's tickets, newest first, for a trigger's dry run.
pub async fn recent_tickets(db: &Db, tenant: &Tenant, limit: i64) -> Result<Vec<Uuid>, StoreError> {
    let rows: Vec<(Uuid,)> = Query::new("SELECT t.id FROM tickets t WHERE ")
        .push_tenant(tenant, "t")
        .push(" AND t.merged_into IS NULL ORDER BY t.created_at DESC, t.id DESC LIMIT ")
        .push_bind(limit)
        .fetch_all(db)
        .await?;
    Ok(rows.into_iter().map(|(id,)| id).collect())
}

/// When the customer last wrote on the ticket.
pub async fn last_customer_reply(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket: Uuid,
) -> Result<Option<Timestamp>, StoreError> {
    let row: Option<(Option<Timestamp>,)> = Query::new(
        "SELECT MAX(c.created_at) FROM ticket_comments c WHERE c.author_type = 'customer' \
         AND c.ticket_id = ",
    )
    .push_bind(ticket)
    .push(" AND ")
    .push_tenant(tenant, "c")
    .fetch_optional(tx)
    .await?;
    Ok(row.and_then(|(at,)| at))
}

/// The tickets opened from chat session `chat`, oldest first (a chat's
/// event runs the triggers on each); the partial index on
/// `tickets.chat_session_id` finds them.
pub async fn tickets_of_chat(
    tx: &mut Tx,
    tenant: &Tenant,
    chat: Uuid,
) -> Result<Vec<Uuid>, StoreError> {
    let rows: Vec<(Uuid,)> = Query::new("SELECT t.id FROM tickets t WHERE t.chat_session_id = ")
        .push_bind(chat)
        .push(" AND ")
        .push_tenant(tenant, "t")
        .push(" ORDER BY t.created_at, t.id")
        .fetch_all(tx)
        .await?;
    Ok(rows.into_iter().map(|(id,)| id).collect())
}
