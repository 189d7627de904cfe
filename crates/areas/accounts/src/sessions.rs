//! SQL for agent sessions. The cookie holds a random secret; the store keeps
//! only its SHA-256, so a read of the table signs no one in.

use serde::Serialize;
use uuid::Uuid;

use crate::actor::Actor;
use crate::audit::{self, Action, Changes, Target, TargetType};
use crate::auth::{Mode, ScopeSet, Tenant};
use crate::companies::CompanyStatus;
use crate::db::{Db, Query, Tx};
use crate::error::StoreError;
use crate::roles::{BuiltInRole, ResolvedRole};
use crate::time::{Timestamp, new_id};

/// A session as its owner sees it in `GET /auth/sessions`.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    pub id: Uuid,
    /// The `User-Agent` the sign-in came with.
    pub user_agent: Option<String>,
    /// The client address the sign-in came from.
    pub ip: Option<String>,
    pub created_at: Timestamp,
    pub last_seen_at: Timestamp,
    pub expires_at: Timestamp,
}

/// A session as authentication reads it: the session, its user and the
/// standing of both.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SessionForAuth {
    pub id: Uuid,
    pub company_id: Uuid,
    pub user_id: Uuid,
    pub mode: Mode,
    pub csrf_token: String,
    pub last_seen_at: Timestamp,
    pub expires_at: Timestamp,
    pub ended_at: Option<Timestamp>,
    pub user_name: String,
    pub user_email: String,
    /// A built-in role's name, when the user holds one …
    pub user_role_name: Option<String>,
    /// … otherwise the custom role's scopes and team limit.
    pub custom_scopes: Option<ScopeSet>,
    pub custom_teams_only: Option<bool>,
    pub user_active: bool,
    pub user_totp_enabled: bool,
    pub company_status: CompanyStatus,
    /// The company's settings object (its `requireTwoFactor`).
    pub company_settings: sqlx::types::Json<serde_json::Map<String, serde_json::Value>>,
}

impl SessionForAuth {
    /// The role the user holds now, resolved.
    pub fn role(&self) -> ResolvedRole {
        let built_in = self.user_role_name.as_deref().and_then(BuiltInRole::named);
        match (built_in, self.custom_scopes) {
            (Some(role), _) => role.resolved(),
            (None, Some(scopes)) => ResolvedRole {
                scopes,
                teams_only: self.custom_teams_only.unwrap_or(false),
                internal_notes: false,
            },
            // Neither: no rights rather than a guess.
            (None, None) => ResolvedRole {
                scopes: ScopeSet::empty(),
                teams_only: false,
                internal_notes: false,
            },
        }
    }

    pub fn tenant(&self) -> Tenant {
        Tenant::new(self.company_id, self.mode)
    }
}

/// What a new session records.
pub struct NewSession<'a> {
    pub company_id: Uuid,
    pub user_id: Uuid,
    pub mode: Mode,
    pub token_digest: &'a str,
    pub csrf_token: &'a str,
    pub ip: Option<&'a str>,
    pub user_agent: Option<&'a str>,
    pub expires_at: Timestamp,
}

/// Opens a session, stamped `now`; returns its id. Its audit entry
/// (`auth.signed_in`) names the user as its actor: who signs in is known
/// only now.
pub async fn create(db: &Db, new: NewSession<'_>, now: Timestamp) -> Result<Uuid, StoreError> {
    let id = new_id();
    let mut tx = db.begin().await?;
    let name: String = Query::new("SELECT name FROM users WHERE id = $1")
        .bind(new.user_id)
        .fetch_scalar(&mut tx)
        .await?;
    tx.act_as(Actor::agent(new.user_id, name));
    Query::new(
        "INSERT INTO agent_sessions (id, token_digest, company_id, user_id, mode, csrf_token, \
         ip, user_agent, created_at, last_seen_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10)",
    )
    .bind(id)
    .bind(new.token_digest)
    .bind(new.company_id)
    .bind(new.user_id)
    .bind(new.mode.as_str())
    .bind(new.csrf_token)
    .bind(new.ip)
    .bind(new.user_agent)
    .bind(now)
    .bind(new.expires_at)
    .execute(&mut tx)
    .await?;
    let changes = Changes::none().with(
        "after",
        serde_json::json!({"sessionId": id, "mode": new.mode.as_str()}),
    );
    let target = Target::new(TargetType::User, new.user_id);
    audit::record(
        &mut tx,
        new.company_id,
        now,
        Action::SignedIn,
        target,
        changes,
    )
    .await?;
    tx.commit().await?;
    Ok(id)
}

/// Records a failed sign-in to user `user_id` (`name`) of `company_id`: a
/// wrong password or second factor for an account that exists (an unknown
/// email names no company, so no log holds it). Its actor is the account
/// the credentials named; the entry's address and user agent say who sent
/// them.
pub async fn record_failed_sign_in(
    db: &Db,
    company_id: Uuid,
    user_id: Uuid,
    name: &str,
    failure: SignInFailure<'_>,
    now: Timestamp,
) -> Result<(), StoreError> {
    let mut tx = db.begin().await?;
    tx.act_as(Actor::agent(user_id, name));
    let changes = Changes::none().with("reason", serde_json::Value::from(failure.reason));
    let target = Target::new(TargetType::User, user_id);
    let action = Action::SignInFailed;
    audit::record(&mut tx, company_id, now, action, target.clone(), changes).await?;
    // The failure that starts a lock-out says so once: the attempts refused
    // while it lasts do no store work at all.
    if let Some(locked) = failure.locked_for {
        let changes = Changes::none().with(
            "after",
            serde_json::json!({ "lockedForSeconds": locked.as_secs() }),
        );
        let action = Action::SignInLimited;
        audit::record(&mut tx, company_id, now, action, target, changes).await?;
    }
    tx.commit().await
}

/// Why a sign-in failed, and the lock-out the failure started, if any.
#[derive(Debug, Clone, Copy)]
pub struct SignInFailure<'a> {
    /// `password` or `second_factor`.
    pub reason: &'a str,
    pub locked_for: Option<std::time::Duration>,
}

const AUTH_COLUMNS: &str = "s.id, s.company_id, s.user_id, s.mode, s.csrf_token, s.last_seen_at, \
     s.expires_at, s.ended_at, u.name AS user_name, u.email AS user_email, \
     u.role_name AS user_role_name, r.scopes AS custom_scopes, r.teams_only AS custom_teams_only, \
     u.is_active AS user_active, u.totp_enabled AS user_totp_enabled, \
     c.status AS company_status, c.settings AS company_settings";

/// The tables `AUTH_COLUMNS` reads, the custom role a user holds as `r`.
const AUTH_FROM: &str = "agent_sessions s JOIN users u ON u.id = s.user_id \
     JOIN companies c ON c.id = s.company_id LEFT JOIN roles r ON r.id = u.role_id";

/// The session whose secret has SHA-256 `digest` (hex), ended or not.
pub async fn find_for_auth(db: &Db, digest: &str) -> Result<Option<SessionForAuth>, StoreError> {
    let sql = format!("SELECT {AUTH_COLUMNS} FROM {AUTH_FROM} WHERE s.token_digest = $1");
    Query::new(sql).bind(digest).fetch_optional(db).await
}

/// The session `id`, ended or not.
pub async fn find_for_auth_by_id(db: &Db, id: Uuid) -> Result<Option<SessionForAuth>, StoreError> {
    let sql = format!("SELECT {AUTH_COLUMNS} FROM {AUTH_FROM} WHERE s.id = $1");
    Query::new(sql).bind(id).fetch_optional(db).await
}

/// The open sessions of company `company_id`'s users holding custom role
/// `role_id` (whose sockets follow the role's scopes when it changes).
pub async fn open_of_role(
    db: &Db,
    company_id: Uuid,
    role_id: Uuid,
) -> Result<Vec<Uuid>, StoreError> {
    Query::new(
        "SELECT s.id FROM agent_sessions s JOIN users u ON u.id = s.user_id \
         WHERE s.company_id = $1 AND u.role_id = $2 AND s.ended_at IS NULL",
    )
    .bind(company_id)
    .bind(role_id)
    .fetch_column(db)
    .await
}

/// Records that session `id` was used at `now` (written at most once a
/// minute per session by the caller; the idle timeout counts from it).
pub async fn touch(db: &Db, id: Uuid, now: Timestamp) -> Result<(), StoreError> {
    Query::new("UPDATE agent_sessions SET last_seen_at = $2 WHERE id = $1 AND ended_at IS NULL")
        .bind(id)
        .bind(now)
        .execute(db)
        .await
}

/// User `user_id`'s sessions still open at `now`, newest first.
pub async fn list_open(
    db: &Db,
    user_id: Uuid,
    now: Timestamp,
    idle: std::time::Duration,
) -> Result<Vec<SessionInfo>, StoreError> {
    Query::new(
        "SELECT id, user_agent, ip, created_at, last_seen_at, expires_at FROM agent_sessions \
         WHERE user_id = $1 AND ended_at IS NULL AND expires_at > $2 AND last_seen_at > $3 \
         ORDER BY created_at DESC, id DESC",
    )
    .bind(user_id)
    .bind(now)
    .bind(now.minus(idle))
    .fetch_all(db)
    .await
}

/// Ends user `user_id`'s session `id` at `now`; whether there was one open.
pub async fn end(db: &Db, user_id: Uuid, id: Uuid, now: Timestamp) -> Result<bool, StoreError> {
    let mut tx = db.begin().await?;
    let ended: Vec<Uuid> = Query::new(
        "UPDATE agent_sessions SET ended_at = $3 WHERE id = $1 AND user_id = $2 \
         AND ended_at IS NULL RETURNING company_id",
    )
    .bind(id)
    .bind(user_id)
    .bind(now)
    .fetch_column(&mut tx)
    .await?;
    for company_id in &ended {
        record_ended(&mut tx, *company_id, user_id, id, now).await?;
    }
    tx.commit().await?;
    Ok(!ended.is_empty())
}

/// Writes the audit entry of session `id` of user `user_id` ended.
async fn record_ended(
    tx: &mut Tx,
    company_id: Uuid,
    user_id: Uuid,
    id: Uuid,
    now: Timestamp,
) -> Result<(), StoreError> {
    let changes = Changes::none().with("before", serde_json::json!({"userId": user_id}));
    let target = Target::new(TargetType::Session, id);
    audit::record(tx, company_id, now, Action::SessionEnded, target, changes).await
}

/// Ends every open session of user `user_id` but `keep` at `now`, in the
/// caller's transaction (an audit entry for each); the ids it ended.
pub async fn end_all_of_user(
    tx: &mut Tx,
    user_id: Uuid,
    keep: Option<Uuid>,
    now: Timestamp,
) -> Result<Vec<Uuid>, StoreError> {
    let ended: Vec<(Uuid, Uuid)> = Query::new(
        "UPDATE agent_sessions SET ended_at = $2 WHERE user_id = $1 AND ended_at IS NULL \
         AND ($3 IS NULL OR id <> $3) RETURNING id, company_id",
    )
    .bind(user_id)
    .bind(now)
    .bind(keep)
    .fetch_all(&mut *tx)
    .await?;
    for (id, company_id) in &ended {
        record_ended(tx, *company_id, user_id, *id, now).await?;
    }
    Ok(ended.into_iter().map(|(id, _)| id).collect())
}
