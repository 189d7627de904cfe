//! SQL of the widget API: which entity, company and mode a public widget
//! key names, and the entity's identity secrets.

use std::time::Duration;

use uuid::Uuid;

use crate::auth::{Mode, Tenant};
use crate::companies::CompanyStatus;
use crate::db::{Db, Query};
use crate::entities::store::WidgetIdentity;
use crate::error::StoreError;
use crate::time::Timestamp;

/// What a widget key opens: one entity of one company, in one mode.
#[derive(Debug, Clone)]
pub struct WidgetTarget {
    pub entity_id: Uuid,
    pub entity_name: String,
    pub tenant: Tenant,
    /// `active` or `suspended`.
    pub company_status: CompanyStatus,
    pub identity: WidgetIdentity,
    /// The secrets an identity token may be signed with now: the current
    /// one, and the previous one during a rotation's grace period.
    pub secrets: Vec<String>,
}

#[derive(sqlx::FromRow)]
struct Row {
    id: Uuid,
    company_id: Uuid,
    name: String,
    company_status: CompanyStatus,
    widget_identity: WidgetIdentity,
    widget_secret: Option<String>,
    widget_previous_secret: Option<String>,
    widget_previous_secret_expires_at: Option<Timestamp>,
}

/// The target of `widget_key` (`wk_test_…` or `wk_live_…`), None when no
/// entity has it. The prefix picks the column, so the lookup is one unique
/// index probe. A previous secret verifies until its grace ends at `now`
/// (the node's clock).
pub async fn resolve(
    db: &Db,
    widget_key: &str,
    now: Timestamp,
) -> Result<Option<WidgetTarget>, StoreError> {
    let (mode, column) = if widget_key.starts_with("wk_test_") {
        (Mode::Test, "widget_key_test")
    } else if widget_key.starts_with("wk_live_") {
        (Mode::Live, "widget_key_live")
    } else {
        return Ok(None);
    };
    let sql = format!(
        "SELECT e.id, e.company_id, e.name, c.status AS company_status, e.widget_identity, \
         e.widget_secret, e.widget_previous_secret, e.widget_previous_secret_expires_at \
         FROM entities e JOIN companies c ON c.id = e.company_id WHERE e.{column} = $1"
    );
    let row: Option<Row> = Query::new(sql).bind(widget_key).fetch_optional(db).await?;
    Ok(row.map(|row| WidgetTarget {
        identity: row.widget_identity,
        secrets: row
            .widget_secret
            .into_iter()
            .chain(row.widget_previous_secret.filter(|_| {
                row.widget_previous_secret_expires_at
                    .is_some_and(|t| t > now)
            }))
            .collect(),
        entity_id: row.id,
        entity_name: row.name,
        tenant: Tenant::new(row.company_id, mode),
        company_status: row.company_status,
    }))
}

/// Replaces the entity's identity secret with `secret`; the old one keeps
/// verifying tokens for `grace` (not at all when `grace` is zero or there
/// was none). Returns when the old one stops, `grace` after `now`. The
/// audit entry is written in the same transaction.
pub async fn rotate_secret(
    db: &Db,
    company_id: Uuid,
    entity_id: Uuid,
    secret: &str,
    grace: Duration,
    now: Timestamp,
) -> Result<Option<Timestamp>, StoreError> {
    let until = (!grace.is_zero()).then(|| now.plus(grace));
    let mut tx = db.begin().await?;
    let had: Option<Option<String>> =
        Query::new("SELECT widget_secret FROM entities WHERE id = $1 AND company_id = $2")
            .bind(entity_id)
            .bind(company_id)
            .fetch_column(&mut tx)
            .await?
            .pop();
    let Some(had) = had else {
        return Err(StoreError::NotFound);
    };
    let until = until.filter(|_| had.is_some());
    Query::new(
        "UPDATE entities SET widget_previous_secret = CASE WHEN $1 IS NULL THEN NULL \
         ELSE widget_secret END, widget_previous_secret_expires_at = $1, widget_secret = $2, \
         updated_at = $3 WHERE id = $4 AND company_id = $5",
    )
    .bind(until)
    .bind(secret)
    .bind(now)
    .bind(entity_id)
    .bind(company_id)
    .execute(&mut tx)
    .await?;
    // The entry says the secret changed, never what it is.
    let what = if had.is_some() { "rotated" } else { "created" };
    let changes = crate::audit::Changes::none().secret(what).with(
        "after",
        serde_json::json!({"previousSecretExpiresAt": until}),
    );
    let target = crate::audit::Target::new(crate::audit::TargetType::Entity, entity_id);
    let action = crate::audit::Action::WidgetSecretRotated;
    crate::audit::record(&mut tx, company_id, now, action, target, changes).await?;
    tx.commit().await?;
    Ok(until)
}

/// What decides whether a visitor token of a session still works: the
/// session's nonce, link epoch and close, its entity's identity secrets and
/// its company's standing.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct TokenState {
    pub session_id: Uuid,
    pub entity_id: Uuid,
    pub token_nonce: i64,
    pub link_epoch: i64,
    pub status: crate::chat::model::SessionStatus,
    pub closed_at: Option<Timestamp>,
    pub visitor_verified: bool,
    /// The visitor's name, to name them as the actor of their changes.
    pub visitor_name: String,
    pub company_status: CompanyStatus,
    widget_secret: Option<String>,
    widget_previous_secret: Option<String>,
    widget_previous_secret_expires_at: Option<Timestamp>,
}

impl TokenState {
    /// The identity secrets that may still vouch for a visitor at `now`:
    /// the current one, and the previous one during its grace period.
    pub fn live_secrets(&self, now: Timestamp) -> impl Iterator<Item = &str> {
        let previous = self.widget_previous_secret.as_deref().filter(|_| {
            self.widget_previous_secret_expires_at
                .is_some_and(|t| t > now)
        });
        self.widget_secret.as_deref().into_iter().chain(previous)
    }

    /// The entity's current identity secret, if it has one.
    pub fn current_secret(&self) -> Option<&str> {
        self.widget_secret.as_deref()
    }
}

/// The token state of session `session_id` of `tenant`, None when there is
/// no such session.
pub async fn token_state(
    db: &Db,
    tenant: &Tenant,
    session_id: Uuid,
) -> Result<Option<TokenState>, StoreError> {
    Query::new(TOKEN_STATE)
        .push("s.id = $1 AND s.company_id = $2 AND s.mode = $3")
        .bind(session_id)
        .bind_tenant(tenant)
        .fetch_optional(db)
        .await
}

/// The token states of the sessions `session_ids` that exist (of any
/// company: the ids come from this node's visitor sockets), in one query.
pub async fn token_states(db: &Db, session_ids: &[Uuid]) -> Result<Vec<TokenState>, StoreError> {
    if session_ids.is_empty() {
        return Ok(Vec::new());
    }
    Query::new(TOKEN_STATE)
        .push("s.id IN ")
        .push_bind_list(session_ids.iter().copied())
        .fetch_all(db)
        .await
}

const TOKEN_STATE: &str = "SELECT s.id AS session_id, s.entity_id, s.token_nonce, s.link_epoch, \
     s.status, s.closed_at, s.visitor_verified, s.visitor_name, c.status AS company_status, \
     e.widget_secret, \
     e.widget_previous_secret, e.widget_previous_secret_expires_at \
     FROM chat_sessions s JOIN entities e ON e.id = s.entity_id \
     JOIN companies c ON c.id = s.company_id WHERE ";

/// Spends the link epoch `epoch` of a session whose nonce is still `nonce`:
/// true for the one caller that moved it on.
pub async fn spend_link(
    db: &Db,
    tenant: &Tenant,
    session_id: Uuid,
    nonce: i64,
    epoch: i64,
) -> Result<bool, StoreError> {
    let changed = Query::new(
        "UPDATE chat_sessions SET link_epoch = link_epoch + 1 \
         WHERE id = $1 AND company_id = $2 AND mode = $3 AND token_nonce = $4 AND link_epoch = $5",
    )
    .bind(session_id)
    .bind_tenant(tenant)
    .bind(nonce)
    .bind(epoch)
    .rows_affected(db)
    .await?;
    Ok(changed == 1)
}

/// Moves the session's nonce on, which ends every visitor and link token
/// minted before: the new nonce, None when there is no such session.
pub async fn revoke_tokens(
    db: &Db,
    tenant: &Tenant,
    session_id: Uuid,
) -> Result<Option<i64>, StoreError> {
    let nonce: Option<(i64,)> = Query::new(
        "UPDATE chat_sessions SET token_nonce = token_nonce + 1 \
         WHERE id = $1 AND company_id = $2 AND mode = $3",
    )
    .bind(session_id)
    .bind_tenant(tenant)
    .push_teams(tenant, "team_id")
    .push(" RETURNING token_nonce")
    .fetch_optional(db)
    .await?;
    Ok(nonce.map(|(nonce,)| nonce))
}

/// The token nonces of a verified visitor's sessions in an entity (the
/// sessions `chat::store::visitor_sessions` lists), by session id.
pub async fn visitor_nonces(
    db: &Db,
    tenant: &Tenant,
    entity_id: Uuid,
    external_id: &str,
) -> Result<std::collections::HashMap<Uuid, i64>, StoreError> {
    let rows: Vec<(Uuid, i64)> = Query::new("SELECT id, token_nonce FROM chat_sessions WHERE ")
        .push_tenant(tenant, "")
        .push(" AND entity_id = ")
        .push_bind(entity_id)
        .push(" AND visitor_external_id = ")
        .push_bind(external_id)
        .push(" AND visitor_verified = ")
        .push_bind(true)
        .fetch_all(db)
        .await?;
    Ok(rows.into_iter().collect())
}
