//! SQL for macros. Every read and change names the agent asking (`viewer`,
//! None for a company key): another agent's personal macro is NotFound to
//! them, as another tenant's is.

use sqlx::types::Json;
use uuid::Uuid;

use super::{Actions, MAX_MACROS, Macro, NewMacro, Visibility};
use crate::auth::Tenant;
use crate::db::{Db, Query, Table, Tx, ensure_reference};
use crate::error::{Refused, StoreError};
use crate::teams::store as team_store;
use crate::time::{Timestamp, new_id};

const MACRO_SELECT: &str = "SELECT m.id, m.name, m.description, m.visibility, m.owner_id, \
     m.actions, m.created_at, m.updated_at FROM macros m";

#[derive(sqlx::FromRow)]
struct MacroRow {
    id: Uuid,
    name: String,
    description: Option<String>,
    visibility: Visibility,
    owner_id: Option<Uuid>,
    actions: Json<Actions>,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl From<MacroRow> for Macro {
    fn from(row: MacroRow) -> Self {
        Macro {
            id: row.id,
            name: row.name,
            description: row.description,
            visibility: row.visibility,
            owner_id: row.owner_id,
            actions: row.actions.0,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

/// `WHERE` the tenant's macros `viewer` sees: the shared ones and their own.
fn visible(select: &str, tenant: &Tenant, viewer: Option<Uuid>) -> Query {
    Query::new(select)
        .push(" WHERE ")
        .push_tenant(tenant, "m")
        .push(" AND (m.visibility = 'shared' OR m.owner_id = ")
        .push_bind(viewer)
        .push(")")
}

/// The macros `viewer` sees, by name.
pub async fn list(
    db: &Db,
    tenant: &Tenant,
    viewer: Option<Uuid>,
) -> Result<Vec<Macro>, StoreError> {
    let rows: Vec<MacroRow> = visible(MACRO_SELECT, tenant, viewer)
        .push(" ORDER BY m.name, m.id LIMIT ")
        .push_bind(MAX_MACROS)
        .fetch_all(db)
        .await?;
    Ok(rows.into_iter().map(Macro::from).collect())
}

/// The macro `id`, if `viewer` sees it.
pub async fn find(
    db: &Db,
    tenant: &Tenant,
    viewer: Option<Uuid>,
    id: Uuid,
) -> Result<Macro, StoreError> {
    let row: MacroRow = visible(MACRO_SELECT, tenant, viewer)
        .push(" AND m.id = ")
        .push_bind(id)
        .fetch_one(db)
        .await?;
    Ok(row.into())
}

/// The shared macro `id`, read in `tx` (an automation applies only
/// shared macros: a personal one is its agent's alone).
pub async fn find_shared_in(tx: &mut Tx, tenant: &Tenant, id: Uuid) -> Result<Macro, StoreError> {
    let row: MacroRow = visible(MACRO_SELECT, tenant, None)
        .push(" AND m.id = ")
        .push_bind(id)
        .fetch_one(tx)
        .await?;
    Ok(row.into())
}

/// Creates a macro; more than `MAX_MACROS` in the tenant is refused.
pub async fn create(
    db: &Db,
    tenant: &Tenant,
    new: NewMacro,
    now: Timestamp,
) -> Result<Macro, Refused> {
    let mut tx = db.begin().await?;
    check_references(&mut tx, tenant, &new.actions).await?;
    let count: i64 = Query::new("SELECT COUNT(*) FROM macros m WHERE ")
        .push_tenant(tenant, "m")
        .fetch_scalar(&mut tx)
        .await?;
    if count >= MAX_MACROS {
        return Err(Refused::InUse(format!(
            "a company has at most {MAX_MACROS} macros per mode: delete one first"
        )));
    }
    let id = new_id();
    Query::new(
        "INSERT INTO macros (id, company_id, mode, name, description, visibility, owner_id, \
         actions, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)",
    )
    .bind(id)
    .bind_tenant(tenant)
    .bind(new.name)
    .bind(new.description)
    .bind(new.visibility)
    .bind(new.owner_id)
    .bind(serde_json::to_value(&new.actions).map_err(StoreError::from)?)
    .bind(now)
    .execute(&mut tx)
    .await?;
    let row: MacroRow = Query::new(MACRO_SELECT)
        .push(" WHERE m.id = ")
        .push_bind(id)
        .fetch_one(&mut tx)
        .await?;
    tx.commit().await?;
    Ok(row.into())
}

/// Replaces what `changes` names of the macro `id` `viewer` sees.
pub async fn update(
    db: &Db,
    tenant: &Tenant,
    viewer: Option<Uuid>,
    id: Uuid,
    changes: NewMacro,
    now: Timestamp,
) -> Result<Macro, StoreError> {
    let mut tx = db.begin().await?;
    check_references(&mut tx, tenant, &changes.actions).await?;
    let _: (Uuid,) = visible("SELECT m.id FROM macros m", tenant, viewer)
        .push(" AND m.id = ")
        .push_bind(id)
        .fetch_one(&mut tx)
        .await?;
    Query::new(
        "UPDATE macros SET name = $2, description = $3, visibility = $4, owner_id = $5, \
         actions = $6, updated_at = $7 WHERE id = $1",
    )
    .bind(id)
    .bind(changes.name)
    .bind(changes.description)
    .bind(changes.visibility)
    .bind(changes.owner_id)
    .bind(serde_json::to_value(&changes.actions)?)
    .bind(now)
    .execute(&mut tx)
    .await?;
    let row: MacroRow = Query::new(MACRO_SELECT)
        .push(" WHERE m.id = ")
        .push_bind(id)
        .fetch_one(&mut tx)
        .await?;
    tx.commit().await?;
    Ok(row.into())
}

/// Deletes the macro `id` `viewer` sees.
pub async fn delete(
    db: &Db,
    tenant: &Tenant,
    viewer: Option<Uuid>,
    id: Uuid,
) -> Result<(), StoreError> {
    visible("DELETE FROM macros AS m", tenant, viewer)
        .push(" AND m.id = ")
        .push_bind(id)
        .execute_or_not_found(db)
        .await
}

/// The assignee and team a macro names must be the tenant's.
async fn check_references(
    tx: &mut Tx,
    tenant: &Tenant,
    actions: &Actions,
) -> Result<(), StoreError> {
    if let super::Set::To(user) = actions.assigned_to_id {
        ensure_reference(
            &mut *tx,
            tenant.company_id,
            Table::Users,
            user,
            "actions.assignedToId",
        )
        .await?;
    }
    if let super::Set::To(team) = actions.team_id {
        team_store::ensure_team(&mut *tx, tenant, team, "actions.teamId").await?;
    }
    Ok(())
}
