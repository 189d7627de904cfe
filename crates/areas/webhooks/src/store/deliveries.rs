//! SQL for webhook deliveries and their attempts: the delivery log the API
//! shows. Each delivery is sent by an outbox job with the delivery's id,
//! inserted beside it; the log moves only in the transaction that ends an
//! attempt of that job.

use serde::Serialize;
use uuid::Uuid;

use crate::JOB_KIND;
use crate::auth::Tenant;
use crate::db::{Db, Query, Tx};
use crate::error::StoreError;
use crate::outbox;
use crate::paging::{After, Order, push_after};
use crate::time::{Timestamp, new_id};
use crate::validate::Page;

crate::text_enum! {
    /// Where a delivery stands in the log.
    pub enum DeliveryStatus {
        Pending = "pending",
        Delivered = "delivered",
        Failed = "failed",
    }
}

/// Longest response body kept in the attempt log.
pub const RESPONSE_BODY_MAX: usize = 1024;

/// One delivery as the API shows it, with its attempts.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// The `X-Service-Delivery` / `webhook-id` header.
    pub id: Uuid,
    pub webhook_id: Uuid,
    pub event_id: Uuid,
    pub event: String,
    /// `pending`, `delivered` or `failed`.
    #[schema(value_type = String)]
    pub status: DeliveryStatus,
    #[sqlx(rename = "attempts")]
    pub attempt_count: i32,
    pub next_attempt_at: Option<Timestamp>,
    pub last_response_status: Option<i32>,
    pub last_error: Option<String>,
    pub delivered_at: Option<Timestamp>,
    pub redelivery_of: Option<Uuid>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    #[sqlx(skip)]
    pub attempts: Vec<Attempt>,
}

const ATTEMPT_COLUMNS: &str = "delivery_id, attempt, attempted_at, duration_ms, success, \
    response_status, response_body, error";

const COLUMNS: &str = "id, webhook_id, event_id, event, status, attempts, next_attempt_at, \
    last_status AS last_response_status, last_error, delivered_at, redelivery_of, created_at, updated_at";

#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Attempt {
    #[serde(skip)]
    pub delivery_id: Uuid,
    /// 1 for the first attempt; the `X-Service-Attempt` header.
    pub attempt: i32,
    pub attempted_at: Timestamp,
    pub duration_ms: i64,
    pub success: bool,
    pub response_status: Option<i32>,
    /// The first 1 KiB of the response body.
    pub response_body: Option<String>,
    /// Why no acceptable response came (timeout, connection refused, …).
    pub error: Option<String>,
}

/// A delivery to queue: `body` is the exact payload every attempt sends.
pub struct NewDelivery<'a> {
    pub webhook_id: Uuid,
    pub event_id: Uuid,
    pub event: &'a str,
    pub body: &'a str,
    pub redelivery_of: Option<Uuid>,
}

/// Queues a delivery, due at once, with the outbox job that sends it, inside `tx`.
/// Due, like that job, by the database's clock (its stamps with it).
pub async fn insert(
    tx: &mut Tx,
    tenant: &Tenant,
    new: NewDelivery<'_>,
) -> Result<Uuid, StoreError> {
    let id = new_id();
    Query::new(format!(
        "INSERT INTO webhook_deliveries (id, webhook_id, company_id, mode, event_id, event, body, \
         status, attempts, next_attempt_at, redelivery_of, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, {now}, $9, {now}, {now})",
        now = tx.backend().now_sql()
    ))
    .bind(id)
    .bind(new.webhook_id)
    .bind_tenant(tenant)
    .bind(new.event_id)
    .bind(new.event)
    .bind(new.body)
    .bind(DeliveryStatus::Pending)
    .bind(new.redelivery_of)
    .execute(&mut *tx)
    .await?;
    // The job carries nothing but the delivery's id, which is its own.
    let payload = serde_json::Value::Object(serde_json::Map::new());
    outbox::enqueue_as(tx, id, JOB_KIND, Some(tenant), &payload).await?;
    Ok(id)
}

/// Appends the conditions that pick `tenant`'s deliveries of `webhook_id`
/// (of `status`, when given): one filter for the page, its count and its
/// attempts.
fn push_filter(
    query: Query,
    tenant: &Tenant,
    webhook_id: Uuid,
    status: Option<DeliveryStatus>,
) -> Query {
    let query = query
        .push("webhook_id = ")
        .push_bind(webhook_id)
        .push(" AND ")
        .push_tenant(tenant, "");
    match status {
        Some(status) => query.push(" AND status = ").push_bind(status),
        None => query,
    }
}

/// A page of `webhook_id`'s deliveries (newest first, one row more than
/// `page.limit`) with their attempts, in two queries plus the count. The caller has checked the webhook
/// belongs to `tenant`.
pub async fn list(
    db: &Db,
    tenant: &Tenant,
    webhook_id: Uuid,
    status: Option<DeliveryStatus>,
    page: Page,
    after: Option<&After>,
) -> Result<(Vec<Delivery>, i64), StoreError> {
    let newest_first = |query: Query| {
        let matching = push_filter(query, tenant, webhook_id, status);
        push_after(matching, "", after, Order::NewestFirst)
            .push(" ORDER BY created_at DESC, id DESC LIMIT ")
            .push_bind(page.limit + 1)
            .push(" OFFSET ")
            .push_bind(page.offset)
    };
    let mut rows: Vec<Delivery> = newest_first(Query::new(format!(
        "SELECT {COLUMNS} FROM webhook_deliveries WHERE "
    )))
    .fetch_all(db)
    .await?;
    let total = push_filter(
        Query::new("SELECT COUNT(*) FROM webhook_deliveries WHERE "),
        tenant,
        webhook_id,
        status,
    )
    .fetch_scalar(db)
    .await?;
    let attempts: Vec<Attempt> = newest_first(Query::new(format!(
        "SELECT {ATTEMPT_COLUMNS} FROM webhook_delivery_attempts WHERE delivery_id IN \
         (SELECT id FROM webhook_deliveries WHERE "
    )))
    .push(") ORDER BY delivery_id, attempt")
    .fetch_all(db)
    .await?;
    for attempt in attempts {
        if let Some(row) = rows.iter_mut().find(|d| d.id == attempt.delivery_id) {
            row.attempts.push(attempt);
        }
    }
    Ok((rows, total))
}

/// One delivery of `webhook_id` with its attempts.
pub async fn find(
    db: &Db,
    tenant: &Tenant,
    webhook_id: Uuid,
    id: Uuid,
) -> Result<(Delivery, String), StoreError> {
    #[derive(sqlx::FromRow)]
    struct WithBody {
        #[sqlx(flatten)]
        delivery: Delivery,
        body: String,
    }
    let row: WithBody = Query::new(format!(
        "SELECT {COLUMNS}, body FROM webhook_deliveries WHERE id = $1 AND webhook_id = $2 AND "
    ))
    .bind(id)
    .bind(webhook_id)
    .push_tenant(tenant, "")
    .fetch_one(db)
    .await?;
    let mut delivery = row.delivery;
    delivery.attempts = Query::new(format!(
        "SELECT {ATTEMPT_COLUMNS} FROM webhook_delivery_attempts \
         WHERE delivery_id = $1 ORDER BY attempt"
    ))
    .bind(id)
    .fetch_all(db)
    .await?;
    Ok((delivery, row.body))
}

/// What an attempt needs of a pending delivery (its job carries the
/// attempt count and the lease).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Pending {
    pub id: Uuid,
    pub webhook_id: Uuid,
    pub event: String,
    pub body: String,
}

/// The delivery `id` while it is pending; None once it ended or went with
/// its webhook.
pub async fn pending(db: &Db, id: Uuid) -> Result<Option<Pending>, StoreError> {
    Query::new(
        "SELECT id, webhook_id, event, body FROM webhook_deliveries WHERE id = $1 AND status = $2",
    )
    .bind(id)
    .bind(DeliveryStatus::Pending)
    .fetch_optional(db)
    .await
}

/// The result of one attempt, to record.
pub struct AttemptResult {
    pub attempt: i32,
    pub attempted_at: Timestamp,
    pub duration_ms: i64,
    pub success: bool,
    pub response_status: Option<i32>,
    pub response_body: Option<String>,
    pub error: Option<String>,
    /// When to try again; None with `success` false means `failed`.
    pub next_attempt_at: Option<Timestamp>,
}

impl AttemptResult {
    pub fn status(&self) -> DeliveryStatus {
        if self.success {
            DeliveryStatus::Delivered
        } else if self.next_attempt_at.is_some() {
            DeliveryStatus::Pending
        } else {
            DeliveryStatus::Failed
        }
    }
}

/// Logs an attempt of delivery `id` and moves the delivery on, inside the
/// transaction that ends the attempt's job (so only while its lease holds),
/// at `now` (the node's clock, which timed the attempt).
pub async fn record_attempt(
    tx: &mut Tx,
    id: Uuid,
    result: &AttemptResult,
    now: Timestamp,
) -> Result<(), StoreError> {
    Query::new(
        "UPDATE webhook_deliveries SET status = $2, attempts = $3, next_attempt_at = $4, \
         last_status = $5, last_error = $6, delivered_at = $7, updated_at = $8 WHERE id = $1",
    )
    .bind(id)
    .bind(result.status())
    .bind(i64::from(result.attempt))
    .bind(result.next_attempt_at)
    .bind(result.response_status.map(i64::from))
    .bind(result.error.as_deref())
    .bind(result.success.then_some(now))
    .bind(now)
    .execute(&mut *tx)
    .await?;
    Query::new(
        "INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, attempted_at, \
         duration_ms, success, response_status, response_body, error) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(new_id())
    .bind(id)
    .bind(i64::from(result.attempt))
    .bind(result.attempted_at)
    .bind(result.duration_ms)
    .bind(result.success)
    .bind(result.response_status.map(i64::from))
    .bind(result.response_body.as_deref())
    .bind(result.error.as_deref())
    .execute(tx)
    .await
}

/// Ends delivery `id` as failed without an attempt (its webhook was
/// disabled meanwhile), inside the transaction that abandons its job, at
/// `now`.
pub async fn give_up(
    tx: &mut Tx,
    id: Uuid,
    reason: &str,
    now: Timestamp,
) -> Result<(), StoreError> {
    Query::new(
        "UPDATE webhook_deliveries SET status = $2, next_attempt_at = NULL, last_error = $3, \
         updated_at = $4 WHERE id = $1",
    )
    .bind(id)
    .bind(DeliveryStatus::Failed)
    .bind(reason)
    .bind(now)
    .execute(tx)
    .await
}

/// The event, event id and exact body of a delivery (for a redelivery).
pub async fn source(
    db: &Db,
    tenant: &Tenant,
    webhook_id: Uuid,
    id: Uuid,
) -> Result<(Uuid, String, String), StoreError> {
    Query::new(
        "SELECT event_id, event, body FROM webhook_deliveries \
         WHERE id = $1 AND webhook_id = $2 AND ",
    )
    .bind(id)
    .bind(webhook_id)
    .push_tenant(tenant, "")
    .fetch_one(db)
    .await
}

/// What an erased event's deliveries carry instead of its data.
pub const ERASED_BODY: &str = r#"{"erased":true}"#;

/// Replaces the bodies of the deliveries of `events` (sent or pending) and
/// the receivers' answers to them, in `tx`: an erased person's data leaves
/// no copy in the delivery log, and a delivery still pending sends the
/// tombstone; answers how many deliveries.
pub async fn erase_bodies(tx: &mut Tx, events: &[Uuid]) -> Result<u64, StoreError> {
    if events.is_empty() {
        return Ok(0);
    }
    let changed = Query::new("UPDATE webhook_deliveries SET body = $1 WHERE event_id IN ")
        .bind(ERASED_BODY)
        .push_bind_list(events.iter().copied())
        .rows_affected(&mut *tx)
        .await?;
    Query::new(
        "UPDATE webhook_delivery_attempts SET response_body = NULL WHERE delivery_id IN \
         (SELECT id FROM webhook_deliveries WHERE event_id IN ",
    )
    .push_bind_list(events.iter().copied())
    .push(")")
    .execute(&mut *tx)
    .await?;
    Ok(changed)
}
