//! SQL for API keys. Only the SHA-256 of a key is stored.

use serde::Serialize;
use uuid::Uuid;

use crate::audit::{Action, Changes, Target, TargetType};
use crate::auth::{Mode, ScopeSet, Tenant, key};
use crate::companies::CompanyStatus;
use crate::db::{Db, On, Query, Tx};
use crate::error::StoreError;
use crate::time::{Timestamp, new_id};

pub const DEFAULT_RATE_LIMIT: i64 = 1000;

/// A key as the API shows it: never the secret, only its display prefix.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiKey {
    pub id: Uuid,
    pub company_id: Uuid,
    pub name: String,
    #[serde(rename = "type")]
    pub mode: Mode,
    pub prefix: String,
    pub scopes: ScopeSet,
    pub rate_limit: i64,
    pub expires_at: Option<Timestamp>,
    pub is_active: bool,
    pub last_used_at: Option<Timestamp>,
    pub created_at: Timestamp,
    /// The agent a personal key belongs to (it acts as them); null for a
    /// company key.
    pub user_id: Option<Uuid>,
}

#[derive(sqlx::FromRow)]
struct KeyRow {
    id: Uuid,
    company_id: Uuid,
    name: String,
    mode: Mode,
    key_prefix: String,
    scopes: ScopeSet,
    rate_limit: i64,
    expires_at: Option<Timestamp>,
    is_active: bool,
    last_used_at: Option<Timestamp>,
    created_at: Timestamp,
    user_id: Option<Uuid>,
}

impl From<KeyRow> for ApiKey {
    fn from(row: KeyRow) -> Self {
        ApiKey {
            id: row.id,
            company_id: row.company_id,
            name: row.name,
            mode: row.mode,
            prefix: row.key_prefix,
            scopes: row.scopes,
            rate_limit: row.rate_limit,
            expires_at: row.expires_at,
            is_active: row.is_active,
            last_used_at: row.last_used_at,
            created_at: row.created_at,
            user_id: row.user_id,
        }
    }
}

const COLUMNS: &str = "id, company_id, name, mode, key_prefix, scopes, rate_limit, expires_at, \
                       is_active, last_used_at, created_at, user_id";

pub struct NewKey {
    pub company_id: Uuid,
    pub name: String,
    pub mode: Mode,
    pub scopes: ScopeSet,
    pub rate_limit: i64,
    pub expires_at: Option<Timestamp>,
}

/// Creates a key, stamped `now`, and returns it with its secret value
/// (shown only now). The audit entry says a secret was made, never which.
pub async fn create(db: &Db, new: NewKey, now: Timestamp) -> Result<(ApiKey, String), StoreError> {
    insert(db, new, None, now).await
}

/// Creates a personal key of agent `user_id` (who must be a user of the
/// key's company), stamped `now`; it acts as them and dies with them.
pub async fn create_personal(
    db: &Db,
    new: NewKey,
    user_id: Uuid,
    now: Timestamp,
) -> Result<(ApiKey, String), StoreError> {
    insert(db, new, Some(user_id), now).await
}

async fn insert(
    db: &Db,
    new: NewKey,
    user_id: Option<Uuid>,
    now: Timestamp,
) -> Result<(ApiKey, String), StoreError> {
    let mut tx = db.begin().await?;
    let secret = key::generate(new.mode);
    let owner = Tenant::new(new.company_id, new.mode);
    let row: KeyRow = Query::new(format!(
        "INSERT INTO api_keys (id, company_id, mode, name, key_hash, key_prefix, scopes, \
         rate_limit, expires_at, is_active, created_at, updated_at, user_id) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, TRUE, $10, $10, $11) RETURNING {COLUMNS}"
    ))
    .bind(new_id())
    .bind_tenant(&owner)
    .bind(&new.name)
    .bind(key::hash(&secret))
    .bind(key::display_prefix(&secret))
    .bind(new.scopes)
    .bind(new.rate_limit)
    .bind(new.expires_at)
    .bind(now)
    .bind(user_id)
    .fetch_one(&mut tx)
    .await?;
    let created = ApiKey::from(row);
    let changes = Changes::created(&created).secret("created");
    audit(&mut tx, &created, now, Action::ApiKeyCreated, changes).await?;
    tx.commit().await?;
    Ok((created, secret))
}

/// Writes the audit entry of revoking `key` (as it was) in `tx`.
async fn audit_revoked(tx: &mut Tx, key: &ApiKey, now: Timestamp) -> Result<(), StoreError> {
    let changes = Changes::deleted(key);
    audit(tx, key, now, Action::ApiKeyRevoked, changes).await
}

/// Writes the audit entry of `action` on `key` in `tx`.
async fn audit(
    tx: &mut Tx,
    key: &ApiKey,
    now: Timestamp,
    action: Action,
    changes: Changes,
) -> Result<(), StoreError> {
    let target = Target::new(TargetType::ApiKey, key.id);
    crate::audit::record(tx, key.company_id, now, action, target, changes).await
}

/// Every key of a company, both modes (the CLI's listing).
pub async fn list(db: &Db, company_id: Uuid) -> Result<Vec<ApiKey>, StoreError> {
    let sql = format!(
        "SELECT {COLUMNS} FROM api_keys WHERE company_id = $1 ORDER BY created_at DESC, id DESC"
    );
    let rows: Vec<KeyRow> = Query::new(sql).bind(company_id).fetch_all(db).await?;
    Ok(rows.into_iter().map(ApiKey::from).collect())
}

/// A page of the tenant's keys (its company, its mode), newest first.
pub async fn list_page(
    db: &Db,
    tenant: &Tenant,
    limit: i64,
    offset: i64,
) -> Result<(Vec<ApiKey>, i64), StoreError> {
    let sql = format!(
        "SELECT {COLUMNS} FROM api_keys WHERE company_id = $1 AND mode = $2 \
         ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4"
    );
    let rows: Vec<KeyRow> = Query::new(sql)
        .bind_tenant(tenant)
        .bind(limit)
        .bind(offset)
        .fetch_all(db)
        .await?;
    let total = Query::new("SELECT COUNT(*) FROM api_keys WHERE company_id = $1 AND mode = $2")
        .bind_tenant(tenant)
        .fetch_scalar(db)
        .await?;
    Ok((rows.into_iter().map(ApiKey::from).collect(), total))
}

/// The key `id` of the tenant; another company's or mode's key is NotFound.
pub async fn find<'c>(
    db: impl Into<On<'c>>,
    tenant: &Tenant,
    id: Uuid,
) -> Result<ApiKey, StoreError> {
    let sql =
        format!("SELECT {COLUMNS} FROM api_keys WHERE id = $1 AND company_id = $2 AND mode = $3");
    let row: KeyRow = Query::new(sql)
        .bind(id)
        .bind_tenant(tenant)
        .fetch_one(db)
        .await?;
    Ok(row.into())
}

/// The scope names key `id` of the tenant holds that this build does not
/// know (a newer build's, during a rolling deploy). `find` leaves them out
/// of the key's scopes, so whoever may manage the key is checked against
/// them here too.
pub async fn unknown_scopes(db: &Db, tenant: &Tenant, id: Uuid) -> Result<Vec<String>, StoreError> {
    let stored: String =
        Query::new("SELECT scopes FROM api_keys WHERE id = $1 AND company_id = $2 AND mode = $3")
            .bind(id)
            .bind_tenant(tenant)
            .fetch_scalar(db)
            .await?;
    Ok(ScopeSet::unknown_in_stored(&stored))
}

/// What `update` may change; `None` keeps the current value.
#[derive(Debug, Default)]
pub struct KeyChanges {
    pub name: Option<String>,
    pub scopes: Option<ScopeSet>,
    pub rate_limit: Option<i64>,
    pub is_active: Option<bool>,
}

/// Changes a key of the tenant, stamped `now`.
pub async fn update(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    changes: KeyChanges,
    now: Timestamp,
) -> Result<ApiKey, StoreError> {
    let sql = format!(
        "UPDATE api_keys SET name = COALESCE($4, name), scopes = COALESCE($5, scopes), \
         rate_limit = COALESCE($6, rate_limit), is_active = COALESCE($7, is_active), \
         updated_at = $8 WHERE id = $1 AND company_id = $2 AND mode = $3 RETURNING {COLUMNS}"
    );
    let mut tx = db.begin().await?;
    let before = find(&mut tx, tenant, id).await?;
    let row: KeyRow = Query::new(sql)
        .bind(id)
        .bind_tenant(tenant)
        .bind(changes.name)
        .bind(changes.scopes)
        .bind(changes.rate_limit)
        .bind(changes.is_active)
        .bind(now)
        .fetch_one(&mut tx)
        .await?;
    let after = ApiKey::from(row);
    let changes = Changes::updated(&before, &after);
    if !changes.is_empty_update() {
        audit(&mut tx, &after, now, Action::ApiKeyUpdated, changes).await?;
    }
    tx.commit().await?;
    Ok(after)
}

/// Revokes (deletes) a key of the tenant, stamped `now`: afterwards it is
/// an invalid key.
pub async fn revoke_in(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    now: Timestamp,
) -> Result<(), StoreError> {
    let mut tx = db.begin().await?;
    let before = find(&mut tx, tenant, id).await?;
    Query::new("DELETE FROM api_keys WHERE id = $1 AND company_id = $2 AND mode = $3")
        .bind(id)
        .bind_tenant(tenant)
        .execute_or_not_found(&mut tx)
        .await?;
    audit_revoked(&mut tx, &before, now).await?;
    tx.commit().await
}

/// Revokes (deletes) a key, stamped `now`. With `company_id` the key must
/// belong to it; without, any key (the CLI, which has no tenant).
pub async fn revoke(
    db: &Db,
    company_id: Option<Uuid>,
    id: Uuid,
    now: Timestamp,
) -> Result<(), StoreError> {
    let mut tx = db.begin().await?;
    let before: KeyRow = Query::new(format!(
        "SELECT {COLUMNS} FROM api_keys WHERE id = $1 AND ($2 IS NULL OR company_id = $2)"
    ))
    .bind(id)
    .bind(company_id)
    .fetch_one(&mut tx)
    .await?;
    let before = ApiKey::from(before);
    Query::new("DELETE FROM api_keys WHERE id = $1")
        .bind(id)
        .execute_or_not_found(&mut tx)
        .await?;
    audit_revoked(&mut tx, &before, now).await?;
    tx.commit().await
}

/// What authentication needs to know about a presented key, in one query.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct KeyForAuth {
    pub id: Uuid,
    /// The key's name: the actor its changes are made by.
    pub name: String,
    pub company_id: Uuid,
    pub mode: Mode,
    pub scopes: ScopeSet,
    pub rate_limit: i64,
    pub expires_at: Option<Timestamp>,
    pub is_active: bool,
    pub last_used_at: Option<Timestamp>,
    pub company_status: CompanyStatus,
    /// The database's clock when it was read: a key expires by the
    /// database's time, the one time every node shares.
    pub db_now: Timestamp,
    /// A personal key's agent, as they are now: their id, name, whether
    /// they are active, and the role they hold (a built-in role's name,
    /// else the custom role's scopes). Null for a company key.
    pub user_id: Option<Uuid>,
    pub owner_name: Option<String>,
    pub owner_active: Option<bool>,
    pub owner_role_name: Option<String>,
    pub owner_custom_scopes: Option<ScopeSet>,
    /// Whether the agent's custom role limits them to their teams: then
    /// their personal key sees what they see, no more.
    pub owner_teams_only: Option<bool>,
}

impl KeyForAuth {
    /// A personal key as its agent stands now: inactive when they are (or
    /// are gone), and holding only the scopes both the key and the agent's
    /// role hold (a narrowed role narrows the key). A company key as it is.
    fn settled(mut self) -> KeyForAuth {
        if self.user_id.is_none() {
            return self;
        }
        let built_in = self
            .owner_role_name
            .as_deref()
            .and_then(crate::roles::BuiltInRole::named);
        let role = match (built_in, self.owner_custom_scopes) {
            (Some(role), _) => role.resolved().scopes,
            (None, Some(scopes)) => scopes,
            // Neither: no rights rather than a guess.
            (None, None) => ScopeSet::empty(),
        };
        self.scopes = self.scopes.intersection(role);
        self.is_active = self.is_active && self.owner_active == Some(true);
        self
    }

    /// Whether the key had expired when it was read (by the database's
    /// clock).
    pub fn is_expired(&self) -> bool {
        self.expires_at.is_some_and(|at| at <= self.db_now)
    }

    /// When the key expires on the clock of a node that read `node_now`
    /// when the database read `db_now`: the expiry moved by the clocks'
    /// difference, so a node whose clock is off still ends the key when
    /// the database's clock reaches its expiry.
    pub fn expiry_on_node(&self, node_now: Timestamp) -> Option<Timestamp> {
        let skew = node_now.0 - self.db_now.0;
        self.expires_at
            .map(|at| Timestamp::from_datetime(at.0.checked_add_signed(skew).unwrap_or(at.0)))
    }
}

/// The key's record with its company's status and the database's time
/// (one SQL text; only the spelling of "now" differs).
fn for_auth(db: &Db, condition: &str) -> String {
    format!(
        "SELECT k.id, k.name, k.company_id, k.mode, k.scopes, k.rate_limit, k.expires_at, \
         k.is_active, k.last_used_at, c.status AS company_status, {now} AS db_now, \
         k.user_id, u.name AS owner_name, u.is_active AS owner_active, \
         u.role_name AS owner_role_name, r.scopes AS owner_custom_scopes, \
         r.teams_only AS owner_teams_only \
         FROM api_keys k JOIN companies c ON c.id = k.company_id \
         LEFT JOIN users u ON u.id = k.user_id LEFT JOIN roles r ON r.id = u.role_id \
         WHERE {condition}",
        now = db.backend().now_sql()
    )
}

pub async fn find_for_auth(db: &Db, key_hash: &str) -> Result<Option<KeyForAuth>, StoreError> {
    let record: Option<KeyForAuth> = Query::new(for_auth(db, "k.key_hash = $1"))
        .bind(key_hash)
        .fetch_optional(db)
        .await?;
    Ok(record.map(KeyForAuth::settled))
}

/// The same record by key id (socket tokens carry the id of the key that
/// minted them, never its hash).
pub async fn find_for_auth_by_id(db: &Db, id: Uuid) -> Result<Option<KeyForAuth>, StoreError> {
    let record: Option<KeyForAuth> = Query::new(for_auth(db, "k.id = $1"))
        .bind(id)
        .fetch_optional(db)
        .await?;
    Ok(record.map(KeyForAuth::settled))
}

/// Records use of a key. Callers throttle this (at most once a minute per
/// key and node), and a key another node touched within the minute is left
/// alone, so authentication never writes per request.
pub async fn touch_last_used(db: &Db, id: Uuid, at: Timestamp) -> Result<(), StoreError> {
    let recent = Timestamp::from_datetime(at.0 - chrono::Duration::seconds(60));
    Query::new(
        "UPDATE api_keys SET last_used_at = $2 \
         WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $3)",
    )
    .bind(id)
    .bind(at)
    .bind(recent)
    .execute(db)
    .await
}

/// Agent `user_id`'s personal keys of the tenant, newest first.
pub async fn list_personal(
    db: &Db,
    tenant: &Tenant,
    user_id: Uuid,
) -> Result<Vec<ApiKey>, StoreError> {
    let sql = format!(
        "SELECT {COLUMNS} FROM api_keys WHERE company_id = $1 AND mode = $2 AND user_id = $3 \
         ORDER BY created_at DESC, id DESC"
    );
    let rows: Vec<KeyRow> = Query::new(sql)
        .bind_tenant(tenant)
        .bind(user_id)
        .fetch_all(db)
        .await?;
    Ok(rows.into_iter().map(ApiKey::from).collect())
}

/// Revokes agent `user_id`'s personal key `id` (NotFound for any other).
pub async fn revoke_personal(db: &Db, user_id: Uuid, id: Uuid) -> Result<(), StoreError> {
    Query::new("DELETE FROM api_keys WHERE id = $1 AND user_id = $2")
        .bind(id)
        .bind(user_id)
        .execute_or_not_found(db)
        .await
}
