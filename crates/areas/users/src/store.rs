//! SQL for users. Creating a user emits `user.created` in the same
//! transaction.

use serde::Serialize;
use uuid::Uuid;

use super::model::Role;
use crate::auth::Tenant;
use crate::db::{Db, Query, Tx};
use crate::error::StoreError;
use crate::events;
use crate::time::{Timestamp, new_id};

#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct User {
    pub id: Uuid,
    pub name: String,
    pub email: String,
    #[schema(schema_with = crate::model::role_schema)]
    pub role: Role,
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

pub const COLUMNS: &str = "id, name, email, role, created_at, updated_at";

pub struct NewUser {
    /// Given when the id comes from outside (an agent console's presence).
    pub id: Option<Uuid>,
    pub name: String,
    pub email: String,
    pub role: Role,
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

/// `create` inside a caller's transaction.
pub async fn create_in(
    tx: &mut Tx,
    tenant: &Tenant,
    new: NewUser,
    now: Timestamp,
) -> Result<User, StoreError> {
    let sql = format!(
        "INSERT INTO users (id, company_id, name, email, role, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING {COLUMNS}"
    );
    let user: User = Query::new(sql)
        .bind(new.id.unwrap_or_else(new_id))
        .bind(tenant.company_id)
        .bind(&new.name)
        .bind(&new.email)
        .bind(new.role.as_str())
        .bind(now)
        .unique_field("email")
        .fetch_one(&mut *tx)
        .await?;
    events::emit(tx, tenant, &UserCreated(&user), now).await?;
    Ok(user)
}

pub async fn find(db: &Db, company_id: Uuid, id: Uuid) -> Result<User, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM users WHERE id = $1 AND company_id = $2");
    Query::new(sql)
        .bind(id)
        .bind(company_id)
        .fetch_one(db)
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
        "SELECT {COLUMNS} FROM users WHERE company_id = $1 AND lower(email) = lower($2) \
         ORDER BY created_at, id LIMIT 1"
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
        "SELECT {COLUMNS} FROM users WHERE company_id = $1 \
         ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3"
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

/// Changes any of name, email, role; `None` keeps the current value.
/// Stamped `now`.
pub async fn update(
    db: &Db,
    company_id: Uuid,
    id: Uuid,
    name: Option<&str>,
    email: Option<&str>,
    role: Option<Role>,
    now: Timestamp,
) -> Result<User, StoreError> {
    let sql = format!(
        "UPDATE users SET name = COALESCE($3, name), email = COALESCE($4, email), \
         role = COALESCE($5, role), updated_at = $6 \
         WHERE id = $1 AND company_id = $2 RETURNING {COLUMNS}"
    );
    Query::new(sql)
        .bind(id)
        .bind(company_id)
        .bind(name)
        .bind(email)
        .bind(role)
        .bind(now)
        .unique_field("email")
        .fetch_one(db)
        .await
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
            created_at: at,
            updated_at: at,
        };
        assert_eq!(
            serde_json::to_string(&serde_json::to_value(UserCreated(&user)).expect("payload"))
                .expect("json"),
            r#"{"createdAt":"2026-11-21T18:48:26.752Z","email":"ada@example.com","id":"01a1ff70-3780-70e9-b8a3-96eee53d5f5c","name":"Ada","role":"AGENT","updatedAt":"2026-11-21T18:48:26.752Z"}"#
        );
    }
}
