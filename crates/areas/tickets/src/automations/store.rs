//! SQL for automations, the trigger cursor of each tenant and the firings
//! of timed automations.

use sqlx::types::Json;
use uuid::Uuid;

use super::{Action, Automation, Conditions, Kind, MAX_AUTOMATIONS, NewAutomation, TriggerEvent};
use crate::auth::{Mode, Tenant};
use crate::db::{Db, Query, Table, Tx, ensure_reference};
use crate::error::{Refused, StoreError};
use crate::teams::store as team_store;
use crate::time::{Timestamp, new_id};

const SELECT: &str = "SELECT a.id, a.name, a.kind, a.events, a.conditions, a.actions, \
     a.position, a.enabled, a.created_at, a.updated_at FROM automations a";

#[derive(sqlx::FromRow)]
struct Row {
    id: Uuid,
    name: String,
    kind: Kind,
    events: Json<Vec<TriggerEvent>>,
    conditions: Json<Conditions>,
    actions: Json<Vec<Action>>,
    position: i64,
    enabled: bool,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl From<Row> for Automation {
    fn from(row: Row) -> Self {
        Automation {
            id: row.id,
            name: row.name,
            kind: row.kind,
            events: row.events.0,
            conditions: row.conditions.0,
            actions: row.actions.0,
            position: row.position,
            enabled: row.enabled,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

fn of_tenant(tenant: &Tenant) -> Query {
    Query::new(SELECT).push(" WHERE ").push_tenant(tenant, "a")
}

/// The tenant's automations in their order (position, then age).
pub async fn list(db: &Db, tenant: &Tenant) -> Result<Vec<Automation>, StoreError> {
    let rows: Vec<Row> = of_tenant(tenant)
        .push(" ORDER BY a.position, a.id LIMIT ")
        .push_bind(MAX_AUTOMATIONS)
        .fetch_all(db)
        .await?;
    Ok(rows.into_iter().map(Automation::from).collect())
}

/// The tenant's enabled automations of `kind`, in their order.
pub async fn enabled(db: &Db, tenant: &Tenant, kind: Kind) -> Result<Vec<Automation>, StoreError> {
    let rows: Vec<Row> = of_tenant(tenant)
        .push(" AND a.enabled AND a.kind = ")
        .push_bind(kind)
        .push(" ORDER BY a.position, a.id")
        .fetch_all(db)
        .await?;
    Ok(rows.into_iter().map(Automation::from).collect())
}

pub async fn find(db: &Db, tenant: &Tenant, id: Uuid) -> Result<Automation, StoreError> {
    let row: Row = of_tenant(tenant)
        .push(" AND a.id = ")
        .push_bind(id)
        .fetch_one(db)
        .await?;
    Ok(row.into())
}

/// Creates an automation (after the last when it names no position).
pub async fn create(
    db: &Db,
    tenant: &Tenant,
    new: NewAutomation,
    now: Timestamp,
) -> Result<Automation, Refused> {
    let mut tx = db.begin().await?;
    check_references(&mut tx, tenant, &new.actions).await?;
    let (count, last): (i64, Option<i64>) =
        Query::new("SELECT COUNT(*), MAX(a.position) FROM automations a WHERE ")
            .push_tenant(tenant, "a")
            .fetch_one(&mut tx)
            .await?;
    if count >= MAX_AUTOMATIONS {
        return Err(Refused::InUse(format!(
            "a company has at most {MAX_AUTOMATIONS} automations per mode: delete one first"
        )));
    }
    let id = new_id();
    let position = new.position.unwrap_or(last.map_or(0, |p| p + 1));
    Query::new(
        "INSERT INTO automations (id, company_id, mode, name, kind, events, conditions, actions, \
         position, enabled, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)",
    )
    .bind(id)
    .bind_tenant(tenant)
    .bind(new.name)
    .bind(new.kind)
    .bind(serde_json::to_value(&new.events).map_err(StoreError::from)?)
    .bind(serde_json::to_value(&new.conditions).map_err(StoreError::from)?)
    .bind(serde_json::to_value(&new.actions).map_err(StoreError::from)?)
    .bind(position)
    .bind(new.enabled)
    .bind(now)
    .execute(&mut tx)
    .await?;
    let row: Row = of_tenant(tenant)
        .push(" AND a.id = ")
        .push_bind(id)
        .fetch_one(&mut tx)
        .await?;
    tx.commit().await?;
    Ok(row.into())
}

/// Replaces the automation `id` with `changes` (the caller merged them
/// over what it read).
pub async fn update(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    changes: NewAutomation,
    now: Timestamp,
) -> Result<Automation, StoreError> {
    let mut tx = db.begin().await?;
    check_references(&mut tx, tenant, &changes.actions).await?;
    Query::new(
        "UPDATE automations SET name = $4, kind = $5, events = $6, conditions = $7, \
         actions = $8, position = $9, enabled = $10, updated_at = $11 \
         WHERE id = $1 AND company_id = $2 AND mode = $3",
    )
    .bind(id)
    .bind_tenant(tenant)
    .bind(changes.name)
    .bind(changes.kind)
    .bind(serde_json::to_value(&changes.events)?)
    .bind(serde_json::to_value(&changes.conditions)?)
    .bind(serde_json::to_value(&changes.actions)?)
    .bind(changes.position.unwrap_or(0))
    .bind(changes.enabled)
    .bind(now)
    .execute_or_not_found(&mut tx)
    .await?;
    let row: Row = of_tenant(tenant)
        .push(" AND a.id = ")
        .push_bind(id)
        .fetch_one(&mut tx)
        .await?;
    tx.commit().await?;
    Ok(row.into())
}

pub async fn delete(db: &Db, tenant: &Tenant, id: Uuid) -> Result<(), StoreError> {
    Query::new("DELETE FROM automations AS a WHERE a.id = ")
        .push_bind(id)
        .push(" AND ")
        .push_tenant(tenant, "a")
        .execute_or_not_found(db)
        .await
}

/// The assignee, team and macro the actions name must be the tenant's.
async fn check_references(
    tx: &mut Tx,
    tenant: &Tenant,
    actions: &[Action],
) -> Result<(), StoreError> {
    for (i, action) in actions.iter().enumerate() {
        let field = format!("actions[{i}].value");
        match action {
            Action::SetAssignee(Some(user)) => {
                ensure_reference(&mut *tx, tenant.company_id, Table::Users, *user, &field).await?
            }
            Action::SetTeam(Some(team)) => {
                team_store::ensure_team(&mut *tx, tenant, *team, &field).await?
            }
            Action::ApplyMacro(id) => {
                crate::macros::store::find_shared_in(tx, tenant, *id)
                    .await
                    .map_err(|err| match err {
                        StoreError::NotFound => StoreError::InvalidReference {
                            field: field.clone(),
                            message: "must be a shared macro of this company".into(),
                        },
                        other => other,
                    })?;
            }
            _ => {}
        }
    }
    Ok(())
}

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

/// The tickets the timed automation has fired on (and not been reset).
pub async fn fired_tickets(
    db: &Db,
    tenant: &Tenant,
    automation: Uuid,
    limit: i64,
) -> Result<Vec<Uuid>, StoreError> {
    let rows: Vec<(Uuid,)> =
        Query::new("SELECT f.ticket_id FROM automation_firings f WHERE f.automation_id = ")
            .push_bind(automation)
            .push(" AND ")
            .push_tenant(tenant, "f")
            .push(" ORDER BY f.ticket_id LIMIT ")
            .push_bind(limit)
            .fetch_all(db)
            .await?;
    Ok(rows.into_iter().map(|(id,)| id).collect())
}

/// Tickets old enough for the timed automation (by the least minutes
/// since creation and update its conditions require, through the
/// tenant's time indexes), on which it has not fired; oldest first.
pub async fn due_tickets(
    db: &Db,
    tenant: &Tenant,
    automation: &Automation,
    now: Timestamp,
    limit: i64,
) -> Result<Vec<Uuid>, StoreError> {
    let (created, updated) = automation.conditions.least_minutes();
    let minutes = |m: i64| now.minus(std::time::Duration::from_secs(m.unsigned_abs() * 60));
    let mut query = Query::new("SELECT t.id FROM tickets t WHERE ")
        .push_tenant(tenant, "t")
        .push(" AND t.merged_into IS NULL");
    if let Some(m) = created {
        query = query.push(" AND t.created_at <= ").push_bind(minutes(m));
    }
    if let Some(m) = updated {
        query = query.push(" AND t.updated_at <= ").push_bind(minutes(m));
    }
    let rows: Vec<(Uuid,)> = query
        .push(
            " AND NOT EXISTS (SELECT 1 FROM automation_firings f \
             WHERE f.ticket_id = t.id AND f.automation_id = ",
        )
        .push_bind(automation.id)
        .push(") ORDER BY t.created_at, t.id LIMIT ")
        .push_bind(limit)
        .fetch_all(db)
        .await?;
    Ok(rows.into_iter().map(|(id,)| id).collect())
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
