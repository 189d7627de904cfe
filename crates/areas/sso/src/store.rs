//! SQL for SSO: `sso_configs` (one per company) and `sso_logins` (a
//! sign-in between its start and the provider's callback, kept in the store
//! so the callback may reach any node).

use uuid::Uuid;

use super::model::{Refusal, SsoConfig, SsoSettings};
use crate::audit::{Action, Changes, Target, TargetType};
use crate::db::{Backend, Db, Query};
use crate::error::StoreError;
use crate::time::Timestamp;

const COLUMNS: &str = "company_id, slug, issuer_url, client_id, allowed_email_domain, \
     jit_enabled, jit_role, passwords_disabled, verified_at, created_at, updated_at";

/// A configuration with its client secret: what the sign-in uses.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SsoSecrets {
    #[sqlx(flatten)]
    pub config: SsoConfig,
    pub client_secret: String,
}

/// The company's configuration, if it has one.
pub async fn find(db: &Db, company_id: Uuid) -> Result<Option<SsoConfig>, StoreError> {
    Query::new(format!(
        "SELECT {COLUMNS} FROM sso_configs WHERE company_id = $1"
    ))
    .bind(company_id)
    .fetch_optional(db)
    .await
}

/// The configuration whose slug is `slug`, with its secret.
pub async fn find_by_slug(db: &Db, slug: &str) -> Result<Option<SsoSecrets>, StoreError> {
    Query::new(format!(
        "SELECT {COLUMNS}, client_secret FROM sso_configs WHERE slug = $1"
    ))
    .bind(slug)
    .fetch_optional(db)
    .await
}

/// The company's configuration with its secret (for the callback).
pub async fn find_secrets(db: &Db, company_id: Uuid) -> Result<Option<SsoSecrets>, StoreError> {
    Query::new(format!(
        "SELECT {COLUMNS}, client_secret FROM sso_configs WHERE company_id = $1"
    ))
    .bind(company_id)
    .fetch_optional(db)
    .await
}

/// Whether the company's agents may not sign in with a password.
pub async fn passwords_disabled(db: &Db, company_id: Uuid) -> Result<bool, StoreError> {
    Ok(find(db, company_id)
        .await?
        .is_some_and(|config| config.passwords_disabled))
}

/// Stores the company's configuration (created or replaced), stamped `now`,
/// with its audit entry (the client secret only said to have changed).
/// A slug another company has is a Conflict on `slug`.
/// A new issuer or client forgets the verification: passwords can be
/// turned off only once a sign-in through the provider now configured has
/// succeeded.
pub async fn save(
    db: &Db,
    company_id: Uuid,
    settings: SsoSettings,
    now: Timestamp,
) -> Result<Result<SsoConfig, Refusal>, StoreError> {
    let mut tx = db.begin().await?;
    let lock = match tx.backend() {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    let current: Option<SsoSecrets> = Query::new(format!(
        "SELECT {COLUMNS}, client_secret FROM sso_configs WHERE company_id = $1{lock}"
    ))
    .bind(company_id)
    .fetch_optional(&mut tx)
    .await?;
    // Whether the client secret changes (the entry says so, never which).
    let rotated = match (&settings.client_secret, &current) {
        (Some(secret), Some(current)) => *secret != current.client_secret,
        (Some(_), None) => true,
        (None, _) => false,
    };
    let secret = match (settings.client_secret, &current) {
        (Some(secret), _) => secret,
        (None, Some(current)) => current.client_secret.clone(),
        (None, None) => return Ok(Err(Refusal::SecretMissing)),
    };
    let verified_at = current.as_ref().and_then(|current| {
        let same_provider = current.config.issuer_url == settings.issuer_url
            && current.config.client_id == settings.client_id;
        current.config.verified_at.filter(|_| same_provider)
    });
    if settings.passwords_disabled && verified_at.is_none() {
        return Ok(Err(Refusal::NotVerified));
    }
    let saved: SsoConfig = Query::new(format!(
        "INSERT INTO sso_configs (company_id, slug, issuer_url, client_id, client_secret, \
         allowed_email_domain, jit_enabled, jit_role, passwords_disabled, verified_at, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11) \
         ON CONFLICT (company_id) DO UPDATE SET slug = $2, issuer_url = $3, client_id = $4, \
         client_secret = $5, allowed_email_domain = $6, jit_enabled = $7, jit_role = $8, \
         passwords_disabled = $9, verified_at = $10, updated_at = $11 \
         RETURNING {COLUMNS}"
    ))
    .bind(company_id)
    .bind(&settings.slug)
    .bind(&settings.issuer_url)
    .bind(&settings.client_id)
    .bind(secret)
    .bind(settings.allowed_email_domain)
    .bind(settings.jit_enabled)
    .bind(settings.jit_role.as_str())
    .bind(settings.passwords_disabled)
    .bind(verified_at)
    .bind(now)
    .unique_field("slug")
    .fetch_one(&mut tx)
    .await?;
    let changes = match &current {
        Some(current) => Changes::updated(&current.config, &saved),
        None => Changes::created(&saved),
    };
    let changes = match (rotated, &current) {
        (true, Some(_)) => changes.secret("rotated"),
        (true, None) => changes.secret("created"),
        (false, _) => changes,
    };
    if !changes.is_empty_update() {
        let target = Target::new(TargetType::Sso, company_id);
        crate::audit::record(
            &mut tx,
            company_id,
            now,
            Action::SsoUpdated,
            target,
            changes,
        )
        .await?;
    }
    tx.commit().await?;
    Ok(Ok(saved))
}

/// Records that a sign-in through the company's provider succeeded (the
/// first time only).
pub async fn mark_verified(db: &Db, company_id: Uuid, now: Timestamp) -> Result<(), StoreError> {
    Query::new(
        "UPDATE sso_configs SET verified_at = $2 WHERE company_id = $1 AND verified_at IS NULL",
    )
    .bind(company_id)
    .bind(now)
    .execute(db)
    .await
}

/// A sign-in in flight: what the callback needs besides the code.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SsoLogin {
    pub company_id: Uuid,
    pub nonce: String,
    pub pkce_verifier: String,
    pub redirect_after: Option<String>,
}

/// What a new sign-in stores; the state itself is kept only as its digest.
pub struct NewLogin<'a> {
    pub state_digest: &'a str,
    pub login: SsoLogin,
    pub expires_at: Timestamp,
}

/// Stores a sign-in started `now`, first removing those past their expiry
/// (a state that no longer has a row is refused like an unknown one).
pub async fn start_login(db: &Db, new: NewLogin<'_>, now: Timestamp) -> Result<(), StoreError> {
    Query::new("DELETE FROM sso_logins WHERE expires_at <= $1")
        .bind(now)
        .execute(db)
        .await?;
    Query::new(
        "INSERT INTO sso_logins (state_digest, company_id, nonce, pkce_verifier, \
         redirect_after, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(new.state_digest)
    .bind(new.login.company_id)
    .bind(new.login.nonce)
    .bind(new.login.pkce_verifier)
    .bind(new.login.redirect_after)
    .bind(now)
    .bind(new.expires_at)
    .execute(db)
    .await
}

/// Why a callback's state was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateRefusal {
    Unknown,
    Used,
    Expired,
}

/// Takes the sign-in of a callback's state: once only, and before its
/// expiry. The row is marked used in the same statement that reads it, so
/// two callbacks with one state (a replay) cannot both get it.
pub async fn take_login(
    db: &Db,
    state_digest: &str,
    now: Timestamp,
) -> Result<Result<SsoLogin, StateRefusal>, StoreError> {
    let taken: Option<SsoLogin> = Query::new(
        "UPDATE sso_logins SET used_at = $2 \
         WHERE state_digest = $1 AND used_at IS NULL AND expires_at > $2 \
         RETURNING company_id, nonce, pkce_verifier, redirect_after",
    )
    .bind(state_digest)
    .bind(now)
    .fetch_optional(db)
    .await?;
    if let Some(login) = taken {
        return Ok(Ok(login));
    }
    // Only to say why: the row (if any) can no longer be taken.
    let used: Option<(Option<Timestamp>,)> =
        Query::new("SELECT used_at FROM sso_logins WHERE state_digest = $1")
            .bind(state_digest)
            .fetch_optional(db)
            .await?;
    Ok(Err(match used {
        None => StateRefusal::Unknown,
        Some((Some(_),)) => StateRefusal::Used,
        Some((None,)) => StateRefusal::Expired,
    }))
}
