//! SQL for automations (each write with its audit entry, in the write's
//! transaction); what the passes read and write (the trigger
//! cursor of each tenant, the firings of timed automations and the
//! tickets they are due on) in `runs`.

mod runs;

pub use runs::*;

use sqlx::types::Json;
use uuid::Uuid;

use super::conditions::Field;
use super::{Action, Automation, Conditions, Kind, MAX_AUTOMATIONS, NewAutomation, TriggerEvent};
use crate::audit::{Action as AuditAction, Changes, TargetType};
use crate::auth::Tenant;
use crate::db::{Db, On, Query, Table, Tx, ensure_reference};
use crate::error::{Refused, StoreError};
use crate::teams::store as team_store;
use crate::time::{Timestamp, new_id};

/// An automation's columns, as `Row` reads them (a read's, or a write's
/// `RETURNING`).
const COLUMNS: &str =
    "id, name, kind, events, conditions, actions, position, enabled, created_at, updated_at";

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
    Query::new(format!("SELECT {COLUMNS} FROM automations a WHERE ")).push_tenant(tenant, "a")
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

pub async fn find<'c>(
    db: impl Into<On<'c>>,
    tenant: &Tenant,
    id: Uuid,
) -> Result<Automation, StoreError> {
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
    check_calendars(&mut tx, tenant, &new.conditions).await?;
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
    let insert = Query::new(
        "INSERT INTO automations (id, company_id, mode, name, kind, events, conditions, actions, \
         position, enabled, updated_at, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)",
    )
    .bind(id)
    .bind_tenant(tenant);
    let insert = bind_fields(insert, new, position, now)?;
    let created = written(&mut tx, tenant, insert, None, now).await?;
    tx.commit().await?;
    Ok(created)
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
    check_calendars(&mut tx, tenant, &changes.conditions).await?;
    let before = find(&mut tx, tenant, id).await?;
    let update = Query::new(
        "UPDATE automations SET name = $4, kind = $5, events = $6, conditions = $7, \
         actions = $8, position = $9, enabled = $10, updated_at = $11 \
         WHERE id = $1 AND company_id = $2 AND mode = $3",
    )
    .bind(id)
    .bind_tenant(tenant);
    let position = changes.position.unwrap_or(0);
    let update = bind_fields(update, changes, position, now)?;
    let after = written(&mut tx, tenant, update, Some(&before), now).await?;
    tx.commit().await?;
    Ok(after)
}

/// Binds what a create and an update write, in this order: name, kind,
/// events, conditions, actions, position, enabled, the write's time.
fn bind_fields(
    query: Query,
    fields: NewAutomation,
    position: i64,
    now: Timestamp,
) -> Result<Query, StoreError> {
    Ok(query
        .bind(fields.name)
        .bind(fields.kind)
        .bind(serde_json::to_value(&fields.events)?)
        .bind(serde_json::to_value(&fields.conditions)?)
        .bind(serde_json::to_value(&fields.actions)?)
        .bind(position)
        .bind(fields.enabled)
        .bind(now))
}

/// Runs `write`, an INSERT or an UPDATE of one automation, in `tx`, and
/// records it in the audit log: created, or updated from `before` (no
/// entry when nothing but its stamp changed). Answers the automation as
/// written (its row returned by the write itself; none: not found).
async fn written(
    tx: &mut Tx,
    tenant: &Tenant,
    write: Query,
    before: Option<&Automation>,
    now: Timestamp,
) -> Result<Automation, StoreError> {
    let row: Row = write
        .push(&format!(" RETURNING {COLUMNS}"))
        .fetch_one(&mut *tx)
        .await?;
    let after = Automation::from(row);
    let (action, changes) = match before {
        None => (AuditAction::AutomationCreated, Changes::created(&after)),
        Some(before) => (
            AuditAction::AutomationUpdated,
            Changes::updated(before, &after),
        ),
    };
    if !changes.is_empty_update() {
        audit(tx, tenant, after.id, now, action, changes).await?;
    }
    Ok(after)
}

/// Deletes the automation `id`, stamped `now` in the audit log.
pub async fn delete(db: &Db, tenant: &Tenant, id: Uuid, now: Timestamp) -> Result<(), StoreError> {
    let mut tx = db.begin().await?;
    let before = find(&mut tx, tenant, id).await?;
    Query::new("DELETE FROM automations AS a WHERE a.id = ")
        .push_bind(id)
        .push(" AND ")
        .push_tenant(tenant, "a")
        .execute_or_not_found(&mut tx)
        .await?;
    let changes = Changes::deleted(&before);
    audit(
        &mut tx,
        tenant,
        id,
        now,
        AuditAction::AutomationDeleted,
        changes,
    )
    .await?;
    tx.commit().await
}

/// Writes the audit entry of `action` on automation `id` in `tx`, made by
/// the transaction's actor (who wrote the rule).
async fn audit(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    now: Timestamp,
    action: AuditAction,
    changes: Changes,
) -> Result<(), StoreError> {
    let target = crate::audit::Target::new(TargetType::Automation, id);
    crate::audit::record(tx, tenant.company_id, now, action, target, changes).await
}

/// The assignee, team, macro and webhook the actions name must be the
/// tenant's.
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
            Action::Webhook(id) => {
                crate::webhooks::store::find(&mut *tx, tenant, *id)
                    .await
                    .map_err(|err| match err {
                        StoreError::NotFound => StoreError::InvalidReference {
                            field: field.clone(),
                            message: "must be a webhook of this company".into(),
                        },
                        other => other,
                    })?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// The calendars the `withinBusinessHours` conditions name must be the
/// tenant's.
async fn check_calendars(
    tx: &mut Tx,
    tenant: &Tenant,
    conditions: &Conditions,
) -> Result<(), StoreError> {
    for (group, list) in [("all", &conditions.all), ("any", &conditions.any)] {
        for (i, condition) in list.iter().enumerate() {
            if condition.field != Field::WithinBusinessHours {
                continue;
            }
            let Some(id) = condition
                .value
                .as_str()
                .and_then(|s| s.parse::<Uuid>().ok())
            else {
                continue;
            };
            crate::sla::store::find_calendar(&mut *tx, tenant, id)
                .await
                .map_err(|err| match err {
                    StoreError::NotFound => StoreError::InvalidReference {
                        field: format!("conditions.{group}[{i}].value"),
                        message: "must be a business-hours calendar of this company".into(),
                    },
                    other => other,
                })?;
        }
    }
    Ok(())
}
