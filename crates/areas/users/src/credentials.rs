//! SQL for what a user signs in with: the password's hash (argon2id, a PHC
//! string made by the accounts area) and when they last signed in. The
//! hash never leaves the store but to be verified.

use uuid::Uuid;

use crate::db::{Db, Query, Tx};
use crate::error::StoreError;
use crate::time::Timestamp;

/// A user as sign-in sees it: who, which company, and the hash to verify.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SignInAccount {
    pub id: Uuid,
    pub company_id: Uuid,
    pub name: String,
    pub email: String,
    /// None until the user accepts an invitation or is given a password.
    pub password_hash: Option<String>,
    pub totp_enabled: bool,
}

const SIGN_IN_COLUMNS: &str =
    "u.id, u.company_id, u.name, u.email, u.password_hash, u.totp_enabled";

/// The accounts with email `email` (stored lower case) that may sign in:
/// with a password, in an active company, oldest first. One person may be
/// an agent of several companies under one email.
pub async fn sign_in_candidates(db: &Db, email: &str) -> Result<Vec<SignInAccount>, StoreError> {
    let sql = format!(
        "SELECT {SIGN_IN_COLUMNS} FROM users u JOIN companies c ON c.id = u.company_id \
         WHERE u.email = $1 AND u.password_hash IS NOT NULL AND u.is_active \
         AND c.status = 'active' \
         ORDER BY u.created_at, u.id"
    );
    Query::new(sql).bind(email).fetch_all(db).await
}

/// The account of user `id` in `company_id`, password or not.
pub async fn account(
    db: &Db,
    company_id: Uuid,
    id: Uuid,
) -> Result<Option<SignInAccount>, StoreError> {
    let sql =
        format!("SELECT {SIGN_IN_COLUMNS} FROM users u WHERE u.id = $1 AND u.company_id = $2");
    Query::new(sql)
        .bind(id)
        .bind(company_id)
        .fetch_optional(db)
        .await
}

/// The account with `email` in `company_id`, if there is one.
pub async fn account_by_email(
    db: &Db,
    company_id: Uuid,
    email: &str,
) -> Result<Option<SignInAccount>, StoreError> {
    let sql =
        format!("SELECT {SIGN_IN_COLUMNS} FROM users u WHERE u.email = $1 AND u.company_id = $2");
    Query::new(sql)
        .bind(email)
        .bind(company_id)
        .fetch_optional(db)
        .await
}

/// Sets user `id`'s password hash, stamped `now`.
pub async fn set_password_hash(
    tx: &mut Tx,
    company_id: Uuid,
    id: Uuid,
    hash: &str,
    now: Timestamp,
) -> Result<(), StoreError> {
    Query::new(
        "UPDATE users SET password_hash = $3, updated_at = $4 WHERE id = $1 AND company_id = $2",
    )
    .bind(id)
    .bind(company_id)
    .bind(hash)
    .bind(now)
    .execute_or_not_found(&mut *tx)
    .await
}

/// Records a successful sign-in of user `id` at `now`.
pub async fn record_sign_in(db: &Db, id: Uuid, now: Timestamp) -> Result<(), StoreError> {
    Query::new("UPDATE users SET last_sign_in_at = $2 WHERE id = $1")
        .bind(id)
        .bind(now)
        .execute(db)
        .await
}

/// User `id`'s TOTP secret as stored (sealed, or base32 if stored before
/// secrets were sealed) and the last time step a code of it
/// was accepted for, if a secret is set.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct TotpState {
    pub totp_secret: Option<String>,
    pub totp_enabled: bool,
    pub totp_last_step: Option<i64>,
}

pub async fn totp_state(db: &Db, id: Uuid) -> Result<TotpState, StoreError> {
    Query::new("SELECT totp_secret, totp_enabled, totp_last_step FROM users WHERE id = $1")
        .bind(id)
        .fetch_one(db)
        .await
}

/// Sets (or, with `None`, clears) user `id`'s TOTP secret; a new secret is
/// not in force until `enable_totp`. Clearing also turns the factor off.
pub async fn set_totp_secret(
    tx: &mut Tx,
    id: Uuid,
    secret: Option<&str>,
    now: Timestamp,
) -> Result<(), StoreError> {
    Query::new(
        "UPDATE users SET totp_secret = $2, totp_last_step = NULL, \
         totp_enabled = CASE WHEN $2 IS NULL THEN FALSE ELSE totp_enabled END, updated_at = $3 \
         WHERE id = $1",
    )
    .bind(id)
    .bind(secret)
    .bind(now)
    .execute_or_not_found(&mut *tx)
    .await
}

/// Replaces user `id`'s stored TOTP secret `from` by `to` (the same
/// secret sealed), only if the row still holds `from`: a secret set up or
/// removed meanwhile stays as it is.
pub async fn reseal_totp_secret(db: &Db, id: Uuid, from: &str, to: &str) -> Result<(), StoreError> {
    Query::new("UPDATE users SET totp_secret = $3 WHERE id = $1 AND totp_secret = $2")
        .bind(id)
        .bind(from)
        .bind(to)
        .execute(db)
        .await
}

/// Puts user `id`'s TOTP secret in force.
pub async fn enable_totp(tx: &mut Tx, id: Uuid, now: Timestamp) -> Result<(), StoreError> {
    Query::new("UPDATE users SET totp_enabled = TRUE, updated_at = $2 WHERE id = $1")
        .bind(id)
        .bind(now)
        .execute_or_not_found(&mut *tx)
        .await
}

/// Claims time step `step` for user `id`: true when no code of this or a
/// later step was accepted before (RFC 6238 asks each code be used once).
/// One statement, so two nodes given the same code cannot both accept it.
pub async fn claim_totp_step(db: &Db, id: Uuid, step: i64) -> Result<bool, StoreError> {
    let claimed = Query::new(
        "UPDATE users SET totp_last_step = $2 WHERE id = $1 \
         AND (totp_last_step IS NULL OR totp_last_step < $2)",
    )
    .bind(id)
    .bind(step)
    .rows_affected(db)
    .await?;
    Ok(claimed == 1)
}

/// Every account with email `email` in an active company, password or not
/// (a reset may set the first one).
pub async fn accounts_with_email(db: &Db, email: &str) -> Result<Vec<SignInAccount>, StoreError> {
    let sql = format!(
        "SELECT {SIGN_IN_COLUMNS} FROM users u JOIN companies c ON c.id = u.company_id \
         WHERE u.email = $1 AND u.is_active AND c.status = 'active' \
         ORDER BY u.created_at, u.id"
    );
    Query::new(sql).bind(email).fetch_all(db).await
}

/// Sets user `id`'s name (an invitation's acceptance may).
pub async fn set_name(tx: &mut Tx, id: Uuid, name: &str, now: Timestamp) -> Result<(), StoreError> {
    Query::new("UPDATE users SET name = $2, updated_at = $3 WHERE id = $1")
        .bind(id)
        .bind(name)
        .bind(now)
        .execute_or_not_found(&mut *tx)
        .await
}

/// How a user came to a new password, as the audit log tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PasswordSet {
    /// Signed in, giving the current one.
    Changed,
    /// By an emailed reset link.
    Reset,
}

/// Writes in `tx` the audit entry of user `id` of `company_id` setting a
/// new password (`how`) at `now`, made by the user themselves (a reset link
/// comes with no session to name them): the entry says the secret changed,
/// never what it is.
pub async fn record_password_set(
    tx: &mut Tx,
    company_id: Uuid,
    id: Uuid,
    how: PasswordSet,
    now: Timestamp,
) -> Result<(), StoreError> {
    use crate::audit::{Action, Changes, Target, TargetType};
    let name: String = Query::new("SELECT name FROM users WHERE id = $1 AND company_id = $2")
        .bind(id)
        .bind(company_id)
        .fetch_scalar(&mut *tx)
        .await?;
    tx.act_as(crate::actor::Actor::agent(id, name));
    let action = match how {
        PasswordSet::Changed => Action::PasswordChanged,
        PasswordSet::Reset => Action::PasswordReset,
    };
    let (target, changes) = (
        Target::new(TargetType::User, id),
        Changes::none().secret("changed"),
    );
    crate::audit::record(tx, company_id, now, action, target, changes).await
}
