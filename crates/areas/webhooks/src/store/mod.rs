//! SQL for webhook subscriptions; deliveries and attempts in `deliveries`.

pub mod deliveries;

use std::time::Duration;

use serde::Serialize;
use sqlx::types::Json;
use uuid::Uuid;

use crate::audit::{Action, Changes, TargetType};
use crate::auth::Tenant;
use crate::db::{Backend, Db, On, Query, Tx};
use crate::error::StoreError;
use crate::signing;
use crate::time::{Timestamp, new_id};
use crate::validate::Page;

/// A webhook as the API shows it (never with its secret).
#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Webhook {
    pub id: Uuid,
    pub name: String,
    pub url: String,
    #[schema(value_type = Vec<String>)]
    pub events: Json<Vec<String>>,
    pub is_active: bool,
    /// Why the service turned it off (410, or 24 h of failures).
    pub disabled_reason: Option<String>,
    /// Start of the current run of failed attempts, if any.
    pub failing_since: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

const COLUMNS: &str =
    "id, name, url, events, is_active, disabled_reason, failing_since, created_at, updated_at";

/// What the delivery worker needs to send: where and with which secrets.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Target {
    pub id: Uuid,
    pub url: String,
    pub secret: String,
    pub previous_secret: Option<String>,
    pub previous_secret_expires_at: Option<Timestamp>,
    pub is_active: bool,
}

impl Target {
    /// The previous secret while its rotation grace period lasts.
    pub fn previous_secret_at(&self, now: Timestamp) -> Option<&str> {
        match (&self.previous_secret, self.previous_secret_expires_at) {
            (Some(secret), Some(until)) if until > now => Some(secret),
            _ => None,
        }
    }
}

pub struct NewWebhook {
    pub name: String,
    pub url: String,
    pub events: Vec<String>,
}

/// Creates a webhook with a new secret, stamped `now`; returns it and the
/// secret.
pub async fn create(
    db: &Db,
    tenant: &Tenant,
    new: NewWebhook,
    now: Timestamp,
) -> Result<(Webhook, String), StoreError> {
    let secret = signing::new_secret();
    let mut tx = db.begin().await?;
    let webhook: Webhook = Query::new(format!(
        "INSERT INTO webhooks (id, company_id, mode, name, url, events, secret, is_active, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, TRUE, $8, $8) \
         RETURNING {COLUMNS}"
    ))
    .bind(new_id())
    .bind_tenant(tenant)
    .bind(new.name)
    .bind(new.url)
    .bind(serde_json::Value::from(new.events))
    .bind(&secret)
    .bind(now)
    .fetch_one(&mut tx)
    .await?;
    let changes = Changes::created(&webhook).secret("created");
    audit(
        &mut tx,
        tenant,
        webhook.id,
        now,
        Action::WebhookCreated,
        changes,
    )
    .await?;
    tx.commit().await?;
    Ok((webhook, secret))
}

/// Writes the audit entry of `action` on webhook `id` in `tx`.
async fn audit(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    now: Timestamp,
    action: Action,
    changes: Changes,
) -> Result<(), StoreError> {
    let target = crate::audit::Target::new(TargetType::Webhook, id);
    crate::audit::record(tx, tenant.company_id, now, action, target, changes).await
}

pub async fn list(db: &Db, tenant: &Tenant, page: Page) -> Result<(Vec<Webhook>, i64), StoreError> {
    let rows = Query::new(format!("SELECT {COLUMNS} FROM webhooks WHERE "))
        .push_tenant(tenant, "")
        .push(" ORDER BY created_at DESC, id DESC LIMIT ")
        .push_bind(page.limit)
        .push(" OFFSET ")
        .push_bind(page.offset)
        .fetch_all(db)
        .await?;
    let total = Query::new("SELECT COUNT(*) FROM webhooks WHERE ")
        .push_tenant(tenant, "")
        .fetch_scalar(db)
        .await?;
    Ok((rows, total))
}

/// The webhook `id` of `tenant`; another tenant's is NotFound.
pub async fn find<'c>(
    db: impl Into<On<'c>>,
    tenant: &Tenant,
    id: Uuid,
) -> Result<Webhook, StoreError> {
    Query::new(format!("SELECT {COLUMNS} FROM webhooks WHERE id = $1 AND "))
        .bind(id)
        .push_tenant(tenant, "")
        .fetch_one(db)
        .await
}

/// Changes to a webhook; `None` keeps the current value.
#[derive(Default)]
pub struct WebhookChanges {
    pub name: Option<String>,
    pub url: Option<String>,
    pub events: Option<Vec<String>>,
    pub is_active: Option<bool>,
}

/// Applies `changes`. Re-activating clears `disabledReason`; re-activating
/// or a new URL clears the failure run, so the 24-hour clock starts again.
/// Stamped `now`.
pub async fn update(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    changes: WebhookChanges,
    now: Timestamp,
) -> Result<Webhook, StoreError> {
    let mut tx = db.begin().await?;
    let before = find(&mut tx, tenant, id).await?;
    let after: Webhook = Query::new(
        "UPDATE webhooks SET name = COALESCE($1, name), url = COALESCE($2, url), \
         events = COALESCE($3, events), is_active = COALESCE($4, is_active), \
         disabled_reason = CASE WHEN $4 IS NULL THEN disabled_reason ELSE NULL END, \
         failing_since = CASE WHEN $4 OR $2 IS NOT NULL THEN NULL ELSE failing_since END, \
         updated_at = $5 WHERE id = $6 AND ",
    )
    .bind(changes.name)
    .bind(changes.url)
    .bind(changes.events.map(serde_json::Value::from))
    .bind(changes.is_active)
    .bind(now)
    .bind(id)
    .push_tenant(tenant, "")
    .push(&format!(" RETURNING {COLUMNS}"))
    .fetch_one(&mut tx)
    .await?;
    let changes = Changes::updated(&before, &after);
    if !changes.is_empty_update() {
        audit(&mut tx, tenant, id, now, Action::WebhookUpdated, changes).await?;
    }
    tx.commit().await?;
    Ok(after)
}

/// Deletes a webhook with its delivery log, stamped `now`.
pub async fn delete(db: &Db, tenant: &Tenant, id: Uuid, now: Timestamp) -> Result<(), StoreError> {
    let mut tx = db.begin().await?;
    let before = find(&mut tx, tenant, id).await?;
    Query::new("DELETE FROM webhooks WHERE id = $1 AND ")
        .bind(id)
        .push_tenant(tenant, "")
        .execute_or_not_found(&mut tx)
        .await?;
    let changes = Changes::deleted(&before);
    audit(&mut tx, tenant, id, now, Action::WebhookDeleted, changes).await?;
    tx.commit().await
}

/// Replaces the secret; the old one keeps signing (beside the new one) for
/// `grace`, or stops at once when `grace` is zero. Returns the new secret
/// and when the old one stops being used, counted from `now` (the node's
/// clock, which deliveries are signed by).
pub async fn rotate_secret(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    grace: Duration,
    now: Timestamp,
) -> Result<(String, Option<Timestamp>), StoreError> {
    let secret = signing::new_secret();
    let until = (!grace.is_zero()).then(|| now.plus(grace));
    // In a transaction so that an idempotent request's record commits
    // with the new secret (see `db::CommitHook`).
    let mut tx = db.begin().await?;
    Query::new(
        "UPDATE webhooks SET previous_secret = CASE WHEN $1 IS NULL THEN NULL ELSE secret END, \
         previous_secret_expires_at = $1, secret = $2, updated_at = $3 WHERE id = $4 AND ",
    )
    .bind(until)
    .bind(&secret)
    .bind(now)
    .bind(id)
    .push_tenant(tenant, "")
    .execute_or_not_found(&mut tx)
    .await?;
    let changes = Changes::none()
        .secret("rotated")
        .with("previousSecretExpiresAt", serde_json::json!(until));
    audit(
        &mut tx,
        tenant,
        id,
        now,
        Action::WebhookSecretRotated,
        changes,
    )
    .await?;
    tx.commit().await?;
    Ok((secret, until))
}

/// Runs `first` (a write of the event, no rows returned), then answers the
/// active webhooks of `tenant` subscribed to `event`, inside `tx`. On
/// Postgres both go in one statement, the write as a CTE (which runs
/// whether or not the lookup reads it): one round trip per event instead
/// of two. SQLite runs in-process and has no data-modifying CTEs: two
/// statements.
pub async fn subscribed_after(
    tx: &mut Tx,
    tenant: &Tenant,
    first: Query,
    event: &str,
) -> Result<Vec<Uuid>, StoreError> {
    let lookup = match tx.backend() {
        Backend::Postgres => first
            .prefixed("WITH written AS (")
            .push(") SELECT id, events FROM webhooks WHERE "),
        Backend::Sqlite => {
            first.execute(&mut *tx).await?;
            Query::new("SELECT id, events FROM webhooks WHERE ")
        }
    };
    let rows: Vec<(Uuid, Json<Vec<String>>)> = lookup
        .push_tenant(tenant, "")
        .push(" AND is_active")
        .fetch_all(tx)
        .await?;
    let rows = rows.into_iter().map(|(id, Json(events))| (id, events));
    Ok(subscribed(rows, event))
}

/// The modes in which company `company_id` has an active webhook
/// subscribed to `event` (for an event that belongs to the company as a
/// whole, such as `audit.entry`, sent in each mode that asks for it).
pub async fn modes_subscribed(
    tx: &mut Tx,
    company_id: Uuid,
    event: &str,
) -> Result<Vec<crate::auth::Mode>, StoreError> {
    let rows: Vec<(crate::auth::Mode, Json<Vec<String>>)> =
        Query::new("SELECT mode, events FROM webhooks WHERE company_id = $1 AND is_active")
            .bind(company_id)
            .fetch_all(tx)
            .await?;
    let mut modes: Vec<crate::auth::Mode> = rows
        .into_iter()
        .filter(|(_, Json(events))| events.iter().any(|e| e == event))
        .map(|(mode, _)| mode)
        .collect();
    modes.sort_by_key(|mode| mode.as_str());
    modes.dedup();
    Ok(modes)
}

/// Appends ` LEFT JOIN webhooks {alias} ON` the tenant's active webhooks,
/// for a statement that reads them beside what it writes (see
/// `events::push_written_from`); select `{alias}.id, {alias}.events`.
pub fn push_active_join(query: Query, tenant: &Tenant, alias: &str) -> Query {
    query
        .push(&format!(" LEFT JOIN webhooks {alias} ON "))
        .push_tenant(tenant, alias)
        .push(&format!(" AND {alias}.is_active"))
}

/// Those of `webhooks` (id and the events each subscribes to) that
/// subscribe to `event`.
pub fn subscribed(
    webhooks: impl IntoIterator<Item = (Uuid, Vec<String>)>,
    event: &str,
) -> Vec<Uuid> {
    webhooks
        .into_iter()
        .filter(|(_, events)| events.iter().any(|e| e == event))
        .map(|(id, _)| id)
        .collect()
}

/// Where and how to send a delivery of webhook `id` (any tenant: workers).
pub async fn target(db: &Db, id: Uuid) -> Result<Target, StoreError> {
    Query::new(
        "SELECT id, url, secret, previous_secret, previous_secret_expires_at, is_active \
         FROM webhooks WHERE id = $1",
    )
    .bind(id)
    .fetch_one(db)
    .await
}

/// The webhook's health after an attempt, in the attempt's transaction.
pub enum Health {
    /// A 2xx: the failure run ends.
    Ok,
    /// A failure: starts or extends the run; past `disable_after` of nothing
    /// but failures the webhook is disabled.
    Failed { disable_after: Duration },
    /// The receiver answered 410 Gone: disabled at once.
    Gone,
}

pub const REASON_GONE: &str = "The endpoint answered 410 Gone";
pub const REASON_FAILING: &str = "Every delivery attempt failed for 24 hours";

pub async fn record_health(
    tx: &mut Tx,
    id: Uuid,
    health: Health,
    now: Timestamp,
) -> Result<(), StoreError> {
    match health {
        Health::Ok => {
            Query::new(
                "UPDATE webhooks SET failing_since = NULL \
                 WHERE id = $1 AND failing_since IS NOT NULL",
            )
            .bind(id)
            .execute(tx)
            .await
        }
        Health::Gone => disable(tx, id, REASON_GONE, now).await,
        Health::Failed { disable_after } => {
            Query::new(
                "UPDATE webhooks SET failing_since = $2 WHERE id = $1 AND failing_since IS NULL",
            )
            .bind(id)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            let cutoff = Timestamp::from_datetime(
                now.0 - chrono::Duration::from_std(disable_after).unwrap_or(chrono::Duration::MAX),
            );
            Query::new(
                "UPDATE webhooks SET is_active = FALSE, disabled_reason = $2, updated_at = $3 \
                 WHERE id = $1 AND is_active AND failing_since <= $4",
            )
            .bind(id)
            .bind(REASON_FAILING)
            .bind(now)
            .bind(cutoff)
            .execute(tx)
            .await
        }
    }
}

async fn disable(tx: &mut Tx, id: Uuid, reason: &str, now: Timestamp) -> Result<(), StoreError> {
    Query::new(
        "UPDATE webhooks SET is_active = FALSE, disabled_reason = $2, updated_at = $3 \
         WHERE id = $1 AND is_active",
    )
    .bind(id)
    .bind(reason)
    .bind(now)
    .execute(tx)
    .await
}
