//! SQL for custom roles, and the roles a company lists (the built-in ones
//! first). Roles belong to the company, shared by both modes as its users
//! are.

use serde::Serialize;
use uuid::Uuid;

use super::model::{BuiltInRole, ResolvedRole, RoleRef};
use crate::audit::{Action, Changes, Target, TargetType};
use crate::auth::ScopeSet;
use crate::db::{Db, On, Query, Tx};
use crate::error::StoreError;
use crate::time::{Timestamp, new_id};

/// A role as the API shows it. A built-in role has no id and no times.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Role {
    /// Null for a built-in role.
    pub id: Option<Uuid>,
    pub name: String,
    pub scopes: ScopeSet,
    /// Whether a holder's visibility is limited to the holder's teams.
    pub teams_only: bool,
    /// Built-in roles cannot be changed or deleted.
    pub built_in: bool,
    pub created_at: Option<Timestamp>,
    pub updated_at: Option<Timestamp>,
}

#[derive(sqlx::FromRow)]
struct RoleRow {
    id: Uuid,
    name: String,
    scopes: ScopeSet,
    teams_only: bool,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl From<RoleRow> for Role {
    fn from(row: RoleRow) -> Self {
        Role {
            id: Some(row.id),
            name: row.name,
            scopes: row.scopes,
            teams_only: row.teams_only,
            built_in: false,
            created_at: Some(row.created_at),
            updated_at: Some(row.updated_at),
        }
    }
}

impl From<BuiltInRole> for Role {
    fn from(role: BuiltInRole) -> Self {
        Role {
            id: None,
            name: role.as_str().to_string(),
            scopes: role.scopes(),
            teams_only: false,
            built_in: true,
            created_at: None,
            updated_at: None,
        }
    }
}

const COLUMNS: &str = "id, name, scopes, teams_only, created_at, updated_at";

/// A custom role's fields, checked (`model::custom_name`,
/// `model::scope_set`).
pub struct NewRole {
    pub name: String,
    pub scopes: ScopeSet,
    pub teams_only: bool,
}

/// A PATCH: `None` keeps a field.
#[derive(Default)]
pub struct RolePatch {
    pub name: Option<String>,
    pub scopes: Option<ScopeSet>,
    pub teams_only: Option<bool>,
}

/// Creates a custom role of `company_id`, stamped `now`. A name taken in
/// any case is a Conflict on `name`.
pub async fn create(
    db: &Db,
    company_id: Uuid,
    new: &NewRole,
    now: Timestamp,
) -> Result<Role, StoreError> {
    let mut tx = db.begin().await?;
    let sql = format!(
        "INSERT INTO roles (id, company_id, name, scopes, teams_only, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING {COLUMNS}"
    );
    let row: RoleRow = Query::new(sql)
        .bind(new_id())
        .bind(company_id)
        .bind(new.name.as_str())
        .bind(new.scopes)
        .bind(new.teams_only)
        .bind(now)
        .unique_field("name")
        .fetch_one(&mut tx)
        .await?;
    let role = Role::from(row);
    let changes = Changes::created(&role);
    audit(
        &mut tx,
        company_id,
        &role,
        now,
        Action::RoleCreated,
        changes,
    )
    .await?;
    tx.commit().await?;
    Ok(role)
}

/// Writes the audit entry of `action` on `role` in `tx`.
async fn audit(
    tx: &mut Tx,
    company_id: Uuid,
    role: &Role,
    now: Timestamp,
    action: Action,
    changes: Changes,
) -> Result<(), StoreError> {
    let target = Target {
        kind: TargetType::Role,
        id: role.id,
    };
    crate::audit::record(tx, company_id, now, action, target, changes).await
}

/// The built-in roles, then the company's custom roles by name: `limit`
/// from `offset` of that one list, and its length.
pub async fn list(
    db: &Db,
    company_id: Uuid,
    limit: i64,
    offset: i64,
) -> Result<(Vec<Role>, i64), StoreError> {
    let built_in = BuiltInRole::ALL.len() as i64;
    let mut roles: Vec<Role> = BuiltInRole::ALL
        .iter()
        .skip(usize::try_from(offset).unwrap_or(usize::MAX))
        .take(usize::try_from(limit).unwrap_or(0))
        .map(|role| Role::from(*role))
        .collect();
    let custom_limit = limit - roles.len() as i64;
    if custom_limit > 0 {
        let sql = format!(
            "SELECT {COLUMNS} FROM roles WHERE company_id = $1 \
             ORDER BY lower(name), id LIMIT $2 OFFSET $3"
        );
        let rows: Vec<RoleRow> = Query::new(sql)
            .bind(company_id)
            .bind(custom_limit)
            .bind((offset - built_in).max(0))
            .fetch_all(db)
            .await?;
        roles.extend(rows.into_iter().map(Role::from));
    }
    let custom: i64 = Query::new("SELECT COUNT(*) FROM roles WHERE company_id = $1")
        .bind(company_id)
        .fetch_scalar(db)
        .await?;
    Ok((roles, built_in + custom))
}

/// A custom role of `company_id`; NotFound for another company's.
pub async fn find<'c>(
    db: impl Into<On<'c>>,
    company_id: Uuid,
    id: Uuid,
) -> Result<Role, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM roles WHERE id = $1 AND company_id = $2");
    let row: RoleRow = Query::new(sql)
        .bind(id)
        .bind(company_id)
        .fetch_one(db)
        .await?;
    Ok(row.into())
}

/// Changes a custom role, stamped `now`: NotFound for another company's,
/// Conflict on `name` for a name taken.
pub async fn update(
    db: &Db,
    company_id: Uuid,
    id: Uuid,
    patch: &RolePatch,
    now: Timestamp,
) -> Result<Role, StoreError> {
    let sql = format!(
        "UPDATE roles SET name = COALESCE($3, name), scopes = COALESCE($4, scopes), \
         teams_only = COALESCE($5, teams_only), updated_at = $6 \
         WHERE id = $1 AND company_id = $2 RETURNING {COLUMNS}"
    );
    let mut tx = db.begin().await?;
    let before = find(&mut tx, company_id, id).await?;
    let row: RoleRow = Query::new(sql)
        .bind(id)
        .bind(company_id)
        .bind(patch.name.as_deref())
        .bind(patch.scopes)
        .bind(patch.teams_only)
        .bind(now)
        .unique_field("name")
        .fetch_one(&mut tx)
        .await?;
    let after = Role::from(row);
    let changes = Changes::updated(&before, &after);
    if !changes.is_empty_update() {
        audit(
            &mut tx,
            company_id,
            &after,
            now,
            Action::RoleUpdated,
            changes,
        )
        .await?;
    }
    tx.commit().await?;
    Ok(after)
}

/// What deleting a role did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deleted {
    Deleted,
    /// A user holds the role: nothing was deleted.
    InUse,
}

/// Deletes a custom role unless a user holds it: the users' reference to
/// it refuses the delete in the same statement, so a user given the role
/// meanwhile is never left holding a deleted one. NotFound for another
/// company's.
pub async fn delete(
    db: &Db,
    company_id: Uuid,
    id: Uuid,
    now: Timestamp,
) -> Result<Deleted, StoreError> {
    let mut tx = db.begin().await?;
    let before = find(&mut tx, company_id, id).await?;
    let deleted = Query::new("DELETE FROM roles WHERE id = $1 AND company_id = $2")
        .bind(id)
        .bind(company_id)
        .foreign_key_field("id", "a user holds the role")
        .execute_or_not_found(&mut tx)
        .await;
    match deleted {
        Ok(()) => {
            let changes = Changes::deleted(&before);
            audit(
                &mut tx,
                company_id,
                &before,
                now,
                Action::RoleDeleted,
                changes,
            )
            .await?;
            tx.commit().await?;
            Ok(Deleted::Deleted)
        }
        // Dropping the transaction rolls it back: nothing was deleted.
        Err(StoreError::InvalidReference { .. }) => Ok(Deleted::InUse),
        Err(other) => Err(other),
    }
}

/// The role named `name` for a user of `company_id`: a built-in one (no
/// SQL), else the company's custom role of that name in any case (its
/// name as stored). NotFound when the company has none.
pub async fn role_named<'c>(
    on: impl Into<On<'c>>,
    company_id: Uuid,
    name: &str,
) -> Result<(RoleRef, ScopeSet), StoreError> {
    if let Some(role) = BuiltInRole::named(name) {
        return Ok((RoleRef::BuiltIn(role), role.scopes()));
    }
    let (id, name, scopes): (Uuid, String, ScopeSet) = Query::new(
        "SELECT id, name, scopes FROM roles WHERE company_id = $1 AND lower(name) = lower($2)",
    )
    .bind(company_id)
    .bind(name.trim())
    .fetch_one(on)
    .await?;
    Ok((RoleRef::Custom { id, name }, scopes))
}

/// What a user holding the role `role_name` (a user's `roleName`) of
/// `company_id` may do: a built-in role resolves without SQL, a custom one
/// by one indexed read. NotFound when the company has no such role (it was
/// deleted, which a held role cannot be, or the name is stale after a
/// rename: read the name with the user).
///
/// Every request a session makes resolves its user's role, so this is the
/// place for a per-node cache (see docs/api.md, "Roles"): keyed by company
/// and name, dropped for the company on every role write and over the bus
/// on every node, as the key cache is.
pub async fn resolve(
    db: &Db,
    company_id: Uuid,
    role_name: &str,
) -> Result<ResolvedRole, StoreError> {
    if let Some(role) = BuiltInRole::named(role_name) {
        return Ok(role.resolved());
    }
    let (scopes, teams_only): (ScopeSet, bool) =
        Query::new("SELECT scopes, teams_only FROM roles WHERE company_id = $1 AND name = $2")
            .bind(company_id)
            .bind(role_name)
            .fetch_one(db)
            .await?;
    Ok(ResolvedRole {
        scopes,
        teams_only,
        internal_notes: false,
    })
}
