//! SQL for users. Creating a user emits `user.created` in the same
//! transaction. A user holds a built-in role (`role_name`) or a custom one
//! (`role_id`, the roles area's row, read here for its name and
//! `teams_only`).

use serde::Serialize;
use uuid::Uuid;

use super::model::Role;
use crate::audit::{Action, Changes, Target, TargetType};
use crate::auth::Tenant;
use crate::db::{Db, On, Query, Tx};
use crate::error::StoreError;
use crate::events;
use crate::roles::RoleRef;
use crate::time::{Timestamp, new_id};

#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct User {
    pub id: Uuid,
    pub name: String,
    pub email: String,
    #[schema(schema_with = crate::model::role_schema)]
    pub role: Role,
    /// The role the user holds: `owner`, `admin`, `agent`, `viewer` or a
    /// custom role's name.
    pub role_name: String,
    /// Whether the user's visibility is limited to their teams (the role's).
    pub teams_only: bool,
    /// False: the user cannot sign in.
    pub is_active: bool,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// `user.created`: the user.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct UserCreated<'a>(pub &'a User);

impl events::EventPayload for UserCreated<'_> {
    const NAME: events::EventName = events::EventName::UserCreated;
}

/// A user's columns, the custom role it holds joined as `r`.
const SELECT: &str = "SELECT u.id, u.name, u.email, u.role, \
     COALESCE(r.name, u.role_name) AS role_name, \
     COALESCE(r.teams_only, FALSE) AS teams_only, u.is_active, u.created_at, u.updated_at \
     FROM users u LEFT JOIN roles r ON r.id = u.role_id";

pub struct NewUser {
    /// Given when the id comes from outside (an agent console's presence).
    pub id: Option<Uuid>,
    pub name: String,
    pub email: String,
    /// A custom role must be one of the company's (the caller looked it up).
    pub role: RoleRef,
}

/// The columns that hold a role: `role` (AGENT or ADMIN, as docs/api.md "Users" shows it),
/// `role_name` (a built-in's) and `role_id` (a custom one's).
fn role_columns(role: &RoleRef) -> (Role, Option<&'static str>, Option<Uuid>) {
    match role {
        RoleRef::BuiltIn(built_in) => (Role::of(role), Some(built_in.as_str()), None),
        RoleRef::Custom { id, .. } => (Role::of(role), None, Some(*id)),
    }
}

/// Creates a user and emits `user.created` (for `tenant`'s mode, the mode of
/// the key that created it), stamped `now`. A taken email is a Conflict on
/// `email`.
pub async fn create(
    db: &Db,
    tenant: &Tenant,
    new: NewUser,
    now: Timestamp,
) -> Result<User, StoreError> {
    let mut tx = db.begin().await?;
    let user = create_in(&mut tx, tenant, new, now).await?;
    tx.commit().await?;
    Ok(user)
}

/// `create` inside a caller's transaction. A custom role deleted meanwhile
/// is an invalid `roleName`.
pub async fn create_in(
    tx: &mut Tx,
    tenant: &Tenant,
    new: NewUser,
    now: Timestamp,
) -> Result<User, StoreError> {
    let id = new.id.unwrap_or_else(new_id);
    let (role, role_name, role_id) = role_columns(&new.role);
    Query::new(
        "INSERT INTO users (id, company_id, name, email, role, role_name, role_id, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)",
    )
    .bind(id)
    .bind(tenant.company_id)
    .bind(&new.name)
    .bind(&new.email)
    .bind(role.as_str())
    .bind(role_name)
    .bind(role_id)
    .bind(now)
    .unique_field("email")
    .foreign_key_field("roleName", "names no role of the company")
    .execute(&mut *tx)
    .await?;
    let user = find(&mut *tx, tenant.company_id, id).await?;
    events::emit(tx, tenant, &UserCreated(&user), now).await?;
    let target = Target::new(TargetType::User, user.id);
    let changes = Changes::created(&user);
    crate::audit::record(
        tx,
        tenant.company_id,
        now,
        Action::UserCreated,
        target,
        changes,
    )
    .await?;
    Ok(user)
}

pub async fn find<'c>(
    on: impl Into<On<'c>>,
    company_id: Uuid,
    id: Uuid,
) -> Result<User, StoreError> {
    let sql = format!("{SELECT} WHERE u.id = $1 AND u.company_id = $2");
    Query::new(sql)
        .bind(id)
        .bind(company_id)
        .fetch_one(on)
        .await
}

/// The company's user with `email`, compared without regard to ASCII case
/// (an identity provider may spell an address differently from the admin
/// who created the user).
pub async fn find_by_email(
    db: &Db,
    company_id: Uuid,
    email: &str,
) -> Result<Option<User>, StoreError> {
    let sql = format!(
        "{SELECT} WHERE u.company_id = $1 AND lower(u.email) = lower($2) \
         ORDER BY u.created_at, u.id LIMIT 1"
    );
    Query::new(sql)
        .bind(company_id)
        .bind(email)
        .fetch_optional(db)
        .await
}

/// Whether a user of any company has id `id` (ids are unique across
/// companies, so such an id cannot be given to a new user).
pub async fn id_taken(db: &Db, id: Uuid) -> Result<bool, StoreError> {
    let count: i64 = Query::new("SELECT COUNT(*) FROM users WHERE id = $1")
        .bind(id)
        .fetch_scalar(db)
        .await?;
    Ok(count > 0)
}

pub async fn list(
    db: &Db,
    company_id: Uuid,
    limit: i64,
    offset: i64,
) -> Result<(Vec<User>, i64), StoreError> {
    let sql = format!(
        "{SELECT} WHERE u.company_id = $1 \
         ORDER BY u.created_at DESC, u.id DESC LIMIT $2 OFFSET $3"
    );
    let users = Query::new(sql)
        .bind(company_id)
        .bind(limit)
        .bind(offset)
        .fetch_all(db)
        .await?;
    let total = Query::new("SELECT COUNT(*) FROM users WHERE company_id = $1")
        .bind(company_id)
        .fetch_scalar(db)
        .await?;
    Ok((users, total))
}

/// A PATCH of a user: `None` keeps a field.
#[derive(Debug, Default)]
pub struct UserChanges<'a> {
    pub name: Option<&'a str>,
    pub email: Option<&'a str>,
    /// A custom role must be one of the company's (the caller looked it up).
    pub role: Option<RoleRef>,
    pub is_active: Option<bool>,
}

/// Changes a user, stamped `now`. A taken email is a Conflict on `email`;
/// a custom role deleted meanwhile is an invalid `roleName`.
pub async fn update(
    db: &Db,
    company_id: Uuid,
    id: Uuid,
    changes: UserChanges<'_>,
    now: Timestamp,
) -> Result<User, StoreError> {
    let columns = changes.role.as_ref().map(role_columns);
    let mut tx = db.begin().await?;
    let before = find(&mut tx, company_id, id).await?;
    // $7 says whether the role changes: a custom role's `role_name` and a
    // built-in's `role_id` are NULL, so COALESCE cannot tell "keep" apart.
    Query::new(
        "UPDATE users SET name = COALESCE($3, name), email = COALESCE($4, email), \
         is_active = COALESCE($5, is_active), updated_at = $6, \
         role = CASE WHEN $7 THEN $8 ELSE role END, \
         role_name = CASE WHEN $7 THEN $9 ELSE role_name END, \
         role_id = CASE WHEN $7 THEN $10 ELSE role_id END \
         WHERE id = $1 AND company_id = $2",
    )
    .bind(id)
    .bind(company_id)
    .bind(changes.name)
    .bind(changes.email)
    .bind(changes.is_active)
    .bind(now)
    .bind(columns.is_some())
    .bind(columns.map(|(role, _, _)| role.as_str()))
    .bind(columns.and_then(|(_, name, _)| name))
    .bind(columns.and_then(|(_, _, role_id)| role_id))
    .unique_field("email")
    .foreign_key_field("roleName", "names no role of the company")
    .execute_or_not_found(&mut tx)
    .await?;
    let user = find(&mut tx, company_id, id).await?;
    let recorded = Changes::updated(&before, &user);
    if !recorded.is_empty_update() {
        // A deactivation is its own action, whatever else changed with it.
        let action = if before.is_active && !user.is_active {
            Action::UserDeactivated
        } else {
            Action::UserUpdated
        };
        let target = Target::new(TargetType::User, id);
        crate::audit::record(&mut tx, company_id, now, action, target, recorded).await?;
    }
    tx.commit().await?;
    Ok(user)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_created_is_the_user_as_the_api_documents_it() {
        let at = Timestamp::from_datetime("2026-11-21T18:48:26.752Z".parse().expect("timestamp"));
        let id: Uuid = "01a1ff70-3780-70e9-b8a3-96eee53d5f5c".parse().expect("id");
        let user = User {
            id,
            name: "Ada".into(),
            email: "ada@example.com".into(),
            role: Role::Agent,
            role_name: "agent".into(),
            teams_only: false,
            is_active: true,
            created_at: at,
            updated_at: at,
        };
        assert_eq!(
            serde_json::to_string(&serde_json::to_value(UserCreated(&user)).expect("payload"))
                .expect("json"),
            r#"{"createdAt":"2026-11-21T18:48:26.752Z","email":"ada@example.com","id":"01a1ff70-3780-70e9-b8a3-96eee53d5f5c","isActive":true,"name":"Ada","role":"AGENT","roleName":"agent","teamsOnly":false,"updatedAt":"2026-11-21T18:48:26.752Z"}"#
        );
    }
}
