//! SQL for business-hours calendars and SLA policies, per company and mode.

use sqlx::types::Json;
use uuid::Uuid;

use super::cache::Rules;
use super::model::{
    BusinessHours, CalendarInput, MAX_CALENDARS, Policy, PolicyConditions, PolicyInput,
    TargetsByPriority, WeeklyInterval,
};
use crate::audit::{Action, Changes, Target, TargetType};
use crate::auth::Tenant;
use crate::db::{Backend, Db, On, Query, Table, Tx, ensure_reference};
use crate::error::{FieldError, Refused, StoreError};
use crate::time::{Timestamp, new_id};
use vocab::ticket::TicketStatus;

const CALENDAR_COLUMNS: &str = "id, name, timezone, weekly, holidays, created_at, updated_at";

#[derive(sqlx::FromRow)]
struct CalendarRow {
    id: Uuid,
    name: String,
    timezone: String,
    weekly: Json<Vec<WeeklyInterval>>,
    holidays: Json<Vec<chrono::NaiveDate>>,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl From<CalendarRow> for BusinessHours {
    fn from(row: CalendarRow) -> Self {
        BusinessHours {
            id: row.id,
            name: row.name,
            timezone: row.timezone,
            weekly: row.weekly.0,
            holidays: row.holidays.0,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

pub async fn list_calendars<'c>(
    on: impl Into<On<'c>>,
    tenant: &Tenant,
) -> Result<Vec<BusinessHours>, StoreError> {
    let rows: Vec<CalendarRow> = Query::new(format!(
        "SELECT {CALENDAR_COLUMNS} FROM business_hours WHERE "
    ))
    .push_tenant(tenant, "")
    .push(" ORDER BY created_at, id")
    .fetch_all(on)
    .await?;
    Ok(rows.into_iter().map(BusinessHours::from).collect())
}

/// The tenant's policies and calendars, as the rule cache keeps them.
pub async fn rules(db: &Db, tenant: &Tenant) -> Result<Rules, StoreError> {
    let policies = list_policies(db, tenant).await?;
    // A company without policies (most of them) needs no calendars.
    let calendars = if policies.is_empty() {
        Vec::new()
    } else {
        list_calendars(db, tenant).await?
    };
    Ok(Rules {
        policies,
        calendars: calendars.iter().map(|c| (c.id, c.hours())).collect(),
    })
}

pub async fn find_calendar<'c>(
    on: impl Into<On<'c>>,
    tenant: &Tenant,
    id: Uuid,
) -> Result<BusinessHours, StoreError> {
    let row: CalendarRow = Query::new(format!(
        "SELECT {CALENDAR_COLUMNS} FROM business_hours WHERE id = $1 AND "
    ))
    .bind(id)
    .push_tenant(tenant, "")
    .fetch_one(on)
    .await?;
    Ok(row.into())
}

pub async fn create_calendar(
    db: &Db,
    tenant: &Tenant,
    input: &CalendarInput,
    now: Timestamp,
) -> Result<BusinessHours, StoreError> {
    let mut tx = db.begin().await?;
    lock_company(&mut tx, tenant).await?;
    let count: i64 = Query::new("SELECT COUNT(*) FROM business_hours WHERE ")
        .push_tenant(tenant, "")
        .fetch_scalar(&mut tx)
        .await?;
    if count >= MAX_CALENDARS as i64 {
        return Err(StoreError::InvalidReference {
            field: "name".into(),
            message: format!("a company has at most {MAX_CALENDARS} business-hours calendars"),
        });
    }
    let row: CalendarRow = Query::new(format!(
        "INSERT INTO business_hours (id, company_id, mode, name, timezone, weekly, holidays, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) \
         RETURNING {CALENDAR_COLUMNS}"
    ))
    .bind(new_id())
    .bind_tenant(tenant)
    .bind(input.name.as_str())
    .bind(input.timezone.as_str())
    .bind(serde_json::to_value(&input.weekly)?)
    .bind(serde_json::to_value(&input.holidays)?)
    .bind(now)
    .fetch_one(&mut tx)
    .await?;
    let created = BusinessHours::from(row);
    let changes = Changes::created(&created);
    let action = Action::BusinessHoursCreated;
    record_calendar(&mut tx, tenant, created.id, now, action, changes).await?;
    tx.commit().await?;
    Ok(created)
}

/// Writes the audit entry of `action` on calendar `id` in `tx`.
async fn record_calendar(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    now: Timestamp,
    action: Action,
    changes: Changes,
) -> Result<(), StoreError> {
    let target = Target::new(TargetType::BusinessHours, id);
    crate::audit::record(tx, tenant.company_id, now, action, target, changes).await
}

/// Stores the whole new state; `updatedAt` moves (to `now`) only on a real
/// change.
pub async fn update_calendar(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    input: &CalendarInput,
    now: Timestamp,
) -> Result<BusinessHours, StoreError> {
    let mut tx = db.begin().await?;
    let current = find_calendar(&mut tx, tenant, id).await?;
    let unchanged = current.name == input.name
        && current.timezone == input.timezone
        && current.weekly == input.weekly
        && current.holidays == input.holidays;
    if unchanged {
        tx.commit().await?;
        return Ok(current);
    }
    let row: CalendarRow = Query::new(format!(
        "UPDATE business_hours SET name = $4, timezone = $5, weekly = $6, holidays = $7, \
         updated_at = $8 WHERE id = $1 AND company_id = $2 AND mode = $3 \
         RETURNING {CALENDAR_COLUMNS}"
    ))
    .bind(id)
    .bind_tenant(tenant)
    .bind(input.name.as_str())
    .bind(input.timezone.as_str())
    .bind(serde_json::to_value(&input.weekly)?)
    .bind(serde_json::to_value(&input.holidays)?)
    .bind(now)
    .fetch_one(&mut tx)
    .await?;
    let updated = BusinessHours::from(row);
    let changes = Changes::updated(&current, &updated);
    let action = Action::BusinessHoursUpdated;
    record_calendar(&mut tx, tenant, id, now, action, changes).await?;
    tx.commit().await?;
    Ok(updated)
}

/// Refused with a conflict while a policy uses the calendar: deleting it
/// would silently switch that policy's clocks to around the clock.
/// Stamped `now`.
pub async fn delete_calendar(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    now: Timestamp,
) -> Result<(), Refused> {
    let mut tx = db.begin().await?;
    lock_company(&mut tx, tenant).await?;
    let before = find_calendar(&mut tx, tenant, id).await?;
    let users: Vec<String> =
        Query::new("SELECT name FROM sla_policies WHERE business_hours_id = $1 ORDER BY position")
            .bind(id)
            .fetch_column(&mut tx)
            .await?;
    if !users.is_empty() {
        return Err(Refused::InUse(format!(
            "The calendar is used by the SLA policies {}: change them first",
            users.join(", ")
        )));
    }
    Query::new("DELETE FROM business_hours WHERE id = $1 AND company_id = $2 AND mode = $3")
        .bind(id)
        .bind_tenant(tenant)
        .execute_or_not_found(&mut tx)
        .await?;
    let (changes, action) = (Changes::deleted(&before), Action::BusinessHoursDeleted);
    record_calendar(&mut tx, tenant, id, now, action, changes).await?;
    Ok(tx.commit().await?)
}

const POLICY_COLUMNS: &str = "id, name, enabled, conditions, targets, business_hours_id, \
     pause_on, warn_minutes, created_at, updated_at";

#[derive(sqlx::FromRow)]
struct PolicyRow {
    id: Uuid,
    name: String,
    enabled: bool,
    conditions: Json<PolicyConditions>,
    targets: Json<TargetsByPriority>,
    business_hours_id: Option<Uuid>,
    pause_on: Json<Vec<TicketStatus>>,
    warn_minutes: i64,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl From<PolicyRow> for Policy {
    fn from(row: PolicyRow) -> Self {
        Policy {
            id: row.id,
            name: row.name,
            enabled: row.enabled,
            conditions: row.conditions.0,
            targets: row.targets.0,
            business_hours_id: row.business_hours_id,
            pause_on: row.pause_on.0,
            warn_minutes: row.warn_minutes,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

/// The tenant's policies in evaluation order.
pub async fn list_policies<'c>(
    on: impl Into<On<'c>>,
    tenant: &Tenant,
) -> Result<Vec<Policy>, StoreError> {
    let rows: Vec<PolicyRow> =
        Query::new(format!("SELECT {POLICY_COLUMNS} FROM sla_policies WHERE "))
            .push_tenant(tenant, "")
            .push(" ORDER BY position")
            .fetch_all(on)
            .await?;
    Ok(rows.into_iter().map(Policy::from).collect())
}

/// Replaces the list whole: policies sent with their id are updated in
/// place (keeping `createdAt`), the others created, the rest deleted.
pub async fn replace_policies(
    db: &Db,
    tenant: &Tenant,
    policies: &[PolicyInput],
    now: Timestamp,
) -> Result<Vec<Policy>, StoreError> {
    let mut tx = db.begin().await?;
    lock_company(&mut tx, tenant).await?;
    let current = list_policies(&mut tx, tenant).await?;
    check_references(&mut tx, tenant, policies, &current).await?;
    let kept: Vec<Uuid> = policies.iter().filter_map(|p| p.id).collect();
    for old in current.iter().filter(|p| !kept.contains(&p.id)) {
        Query::new("DELETE FROM sla_policies WHERE id = $1 AND company_id = $2 AND mode = $3")
            .bind(old.id)
            .bind_tenant(tenant)
            .execute(&mut tx)
            .await?;
    }
    for (position, policy) in policies.iter().enumerate() {
        let old = policy.id.and_then(|id| current.iter().find(|p| p.id == id));
        let (id, created_at, updated_at) = match old {
            Some(old) if policy.differs_from(old) => (old.id, old.created_at, now),
            Some(old) => (old.id, old.created_at, old.updated_at),
            None => (new_id(), now, now),
        };
        let sql = if old.is_some() {
            "UPDATE sla_policies SET position = $4, name = $5, enabled = $6, conditions = $7, \
             targets = $8, business_hours_id = $9, pause_on = $10, warn_minutes = $11, \
             created_at = $12, updated_at = $13 WHERE id = $1 AND company_id = $2 AND mode = $3"
        } else {
            "INSERT INTO sla_policies (id, company_id, mode, position, name, enabled, \
             conditions, targets, business_hours_id, pause_on, warn_minutes, created_at, \
             updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
        };
        Query::new(sql)
            .bind(id)
            .bind_tenant(tenant)
            .bind(position as i64)
            .bind(policy.name.as_str())
            .bind(policy.enabled)
            .bind(serde_json::to_value(&policy.conditions)?)
            .bind(serde_json::to_value(&policy.targets)?)
            .bind(policy.business_hours_id)
            .bind(serde_json::to_value(&policy.pause_on)?)
            .bind(policy.warn_minutes)
            .bind(created_at)
            .bind(updated_at)
            .execute(&mut tx)
            .await?;
    }
    let saved = list_policies(&mut tx, tenant).await?;
    let changes = Changes::updated(
        &serde_json::json!({ "policies": current }),
        &serde_json::json!({ "policies": saved }),
    );
    if !changes.is_empty_update() {
        let target = Target::new(TargetType::SlaPolicies, tenant.company_id);
        let action = Action::SlaPoliciesReplaced;
        crate::audit::record(&mut tx, tenant.company_id, now, action, target, changes).await?;
    }
    tx.commit().await?;
    Ok(saved)
}

/// Every reference of the list checked in the writing transaction, every
/// problem listed: ids of the tenant's policies, its calendars, the
/// company's entities.
async fn check_references(
    tx: &mut Tx,
    tenant: &Tenant,
    policies: &[PolicyInput],
    current: &[Policy],
) -> Result<(), StoreError> {
    let mut problems = Vec::new();
    for (i, policy) in policies.iter().enumerate() {
        let field = |name: &str| format!("policies[{i}].{name}");
        if let Some(id) = policy.id
            && !current.iter().any(|p| p.id == id)
        {
            problems.push(FieldError {
                field: field("id"),
                message: "must be the id of one of these policies (leave it out to add one)".into(),
            });
        }
        if let Some(id) = policy.business_hours_id {
            match find_calendar(&mut *tx, tenant, id).await {
                Ok(_) => {}
                Err(StoreError::NotFound) => problems.push(FieldError {
                    field: field("businessHoursId"),
                    message: "must be a business-hours calendar of this company".into(),
                }),
                Err(other) => return Err(other),
            }
        }
        if let Some(id) = policy.conditions.team_id
            && !is_team_of(&mut *tx, tenant, id).await?
        {
            problems.push(FieldError {
                field: field("conditions.teamId"),
                message: "must be a team of this company".into(),
            });
        }
        if let Some(id) = policy.conditions.entity_id {
            let name = field("conditions.entityId");
            match ensure_reference(&mut *tx, tenant.company_id, Table::Entities, id, &name).await {
                Ok(()) => {}
                Err(StoreError::InvalidReference { field, message }) => {
                    problems.push(FieldError { field, message });
                }
                Err(other) => return Err(other),
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(StoreError::InvalidReferences(problems))
    }
}

/// Whether `id` is a team of `tenant` (teams belong to a company and a
/// mode, so the reference check of the store crate, by company, is not
/// enough).
async fn is_team_of(tx: &mut Tx, tenant: &Tenant, id: Uuid) -> Result<bool, StoreError> {
    let found: Option<(Uuid,)> =
        Query::new("SELECT id FROM teams WHERE id = $1 AND company_id = $2 AND mode = $3")
            .bind(id)
            .bind_tenant(tenant)
            .fetch_optional(&mut *tx)
            .await?;
    Ok(found.is_some())
}

/// Concurrent writers of one company's calendars and policies take turns
/// (SQLite's write transaction already does); NO KEY UPDATE does not block
/// inserts that reference the company.
async fn lock_company(tx: &mut Tx, tenant: &Tenant) -> Result<(), StoreError> {
    if tx.backend() == Backend::Postgres {
        Query::new("SELECT id FROM companies WHERE id = $1 FOR NO KEY UPDATE")
            .bind(tenant.company_id)
            .execute(&mut *tx)
            .await?;
    }
    Ok(())
}
