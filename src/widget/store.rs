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
        tenant: Tenant {
            company_id: row.company_id,
            mode,
        },
        company_status: row.company_status,
    }))
}

/// Replaces the entity's identity secret with `secret`; the old one keeps
/// verifying tokens for `grace` (not at all when `grace` is zero or there
/// was none). Returns when the old one stops, `grace` after `now`.
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
    tx.commit().await?;
    Ok(until)
}
