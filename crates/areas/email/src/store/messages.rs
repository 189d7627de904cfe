//! `email_messages`, `email_tickets` and `email_undeliverable`: every
//! Message-ID the tenant received or sent (once: a duplicate is found by
//! its row), the ticket each belongs to (threading), each email ticket's
//! reply token and copied addresses, and the addresses that bounced.

use serde_json::json;
use sqlx::types::Json;
use uuid::Uuid;

use crate::auth::Tenant;
use crate::db::{Query, Tx};
use crate::error::StoreError;
use crate::model::{Direction, Envelope};
use crate::time::Timestamp;

/// Characters of a reply token: 16 of base62 (~95 bits), unguessable, so
/// a reply to `support+<token>@…` proves it answers that ticket's mail.
const TOKEN_LEN: usize = 16;

/// A Message-ID to record.
#[derive(Debug, Clone)]
pub struct NewMessage<'a> {
    pub message_id: &'a str,
    pub channel_id: Option<Uuid>,
    pub ticket_id: Option<Uuid>,
    pub comment_id: Option<Uuid>,
    pub direction: Direction,
    pub sender: Option<&'a str>,
    pub envelope: Option<&'a Envelope>,
    /// The HTML body, sanitised.
    pub html: Option<&'a str>,
    /// The start of the new text, which a reply quotes.
    pub excerpt: Option<&'a str>,
}

/// Records `message`; false when the tenant already holds its Message-ID
/// (a duplicate: nothing written).
pub async fn record(
    tx: &mut Tx,
    tenant: &Tenant,
    message: &NewMessage<'_>,
    now: Timestamp,
) -> Result<bool, StoreError> {
    let envelope = message
        .envelope
        .map(|e| serde_json::to_value(e).unwrap_or_else(|_| json!({})))
        .unwrap_or_else(|| json!({}));
    let written = Query::new(
        "INSERT INTO email_messages (company_id, mode, message_id, channel_id, ticket_id, \
         comment_id, direction, sender, envelope, html, excerpt, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
         ON CONFLICT (company_id, mode, message_id) DO NOTHING",
    )
    .bind_tenant(tenant)
    .bind(message.message_id)
    .bind(message.channel_id)
    .bind(message.ticket_id)
    .bind(message.comment_id)
    .bind(message.direction)
    .bind(message.sender)
    .bind(envelope)
    .bind(message.html)
    .bind(message.excerpt)
    .bind(now)
    .rows_affected(&mut *tx)
    .await?;
    Ok(written == 1)
}

/// Whether the tenant already holds `message_id`.
pub async fn known(tx: &mut Tx, tenant: &Tenant, message_id: &str) -> Result<bool, StoreError> {
    let found: Option<(String,)> = Query::new(
        "SELECT message_id FROM email_messages WHERE company_id = $1 AND mode = $2 \
         AND message_id = $3",
    )
    .bind_tenant(tenant)
    .bind(message_id)
    .fetch_optional(&mut *tx)
    .await?;
    Ok(found.is_some())
}

/// The ticket of the newest of `ids` the tenant received or sent on one.
pub async fn ticket_of_ids(
    tx: &mut Tx,
    tenant: &Tenant,
    ids: &[String],
) -> Result<Option<Uuid>, StoreError> {
    if ids.is_empty() {
        return Ok(None);
    }
    let found: Option<(Uuid,)> = Query::new(
        "SELECT m.ticket_id FROM email_messages m JOIN tickets t ON t.id = m.ticket_id \
         WHERE m.company_id = $1 AND m.mode = $2 AND m.message_id IN (",
    )
    .bind_tenant(tenant)
    .push_bind_list(ids.iter().map(String::as_str))
    .push(") ORDER BY m.created_at DESC LIMIT 1")
    .fetch_optional(&mut *tx)
    .await?;
    Ok(found.map(|(id,)| id))
}

/// An email ticket's thread: its channel, reply token and copies.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Thread {
    pub ticket_id: Uuid,
    pub channel_id: Option<Uuid>,
    pub reply_token: String,
    pub cc: Json<Vec<String>>,
}

const THREAD: &str = "SELECT ticket_id, channel_id, reply_token, cc FROM email_tickets";

/// The thread of the tenant's ticket, if it talks by email.
pub async fn thread(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
) -> Result<Option<Thread>, StoreError> {
    Query::new(THREAD)
        .push(" WHERE ticket_id = ")
        .push_bind(ticket_id)
        .push(" AND ")
        .push_tenant(tenant, "")
        .fetch_optional(&mut *tx)
        .await
}

/// The thread whose reply token is `token`.
pub async fn thread_of_token(
    tx: &mut Tx,
    tenant: &Tenant,
    token: &str,
) -> Result<Option<Thread>, StoreError> {
    Query::new(THREAD)
        .push(" WHERE reply_token = ")
        .push_bind(token)
        .push(" AND ")
        .push_tenant(tenant, "")
        .fetch_optional(&mut *tx)
        .await
}

/// The ticket's thread, made (with a new reply token) if it has none;
/// `cc` joins its copies.
pub async fn open_thread(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
    channel_id: Option<Uuid>,
    cc: &[String],
) -> Result<Thread, StoreError> {
    let current = thread(tx, tenant, ticket_id).await?;
    let mut copies = current.as_ref().map(|t| t.cc.0.clone()).unwrap_or_default();
    for address in cc {
        if !copies.contains(address) {
            copies.push(address.clone());
        }
    }
    let token = current
        .as_ref()
        .map(|t| t.reply_token.clone())
        .unwrap_or_else(|| infra::key::random_base62(TOKEN_LEN).to_ascii_lowercase());
    Query::new(
        "INSERT INTO email_tickets (ticket_id, company_id, mode, channel_id, reply_token, cc) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (ticket_id) DO UPDATE SET cc = excluded.cc, \
         channel_id = COALESCE(email_tickets.channel_id, excluded.channel_id)",
    )
    .bind(ticket_id)
    .bind_tenant(tenant)
    .bind(channel_id)
    .bind(&token)
    .bind(json!(copies))
    .execute(&mut *tx)
    .await?;
    Ok(Thread {
        ticket_id,
        channel_id: current.as_ref().and_then(|t| t.channel_id).or(channel_id),
        reply_token: token,
        cc: Json(copies),
    })
}

/// The last message a ticket received: what a reply answers and quotes.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct LastReceived {
    pub message_id: String,
    pub sender: Option<String>,
    pub excerpt: Option<String>,
    pub created_at: Timestamp,
}

/// The Message-IDs of the ticket, oldest first, the newest `limit` (a
/// reply's `References`), and the last one it received.
pub async fn history(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
    limit: i64,
) -> Result<(Vec<String>, Option<LastReceived>), StoreError> {
    let mut ids: Vec<String> = Query::new(
        "SELECT message_id FROM email_messages WHERE ticket_id = $1 \
         AND company_id = $2 AND mode = $3 AND direction <> 'ignored' \
         ORDER BY created_at DESC, message_id DESC LIMIT $4",
    )
    .bind(ticket_id)
    .bind_tenant(tenant)
    .bind(limit)
    .fetch_column(&mut *tx)
    .await?;
    ids.reverse();
    let last: Option<LastReceived> = Query::new(
        "SELECT message_id, sender, excerpt, created_at FROM email_messages \
         WHERE ticket_id = $1 AND company_id = $2 AND mode = $3 AND direction = 'in' \
         ORDER BY created_at DESC, message_id DESC LIMIT 1",
    )
    .bind(ticket_id)
    .bind_tenant(tenant)
    .fetch_optional(&mut *tx)
    .await?;
    Ok((ids, last))
}

/// Messages received since `since` from `sender` (any channel of the
/// tenant) and on `channel_id` (any sender): the two rate limits' counts.
pub async fn recent_counts(
    tx: &mut Tx,
    tenant: &Tenant,
    sender: Option<&str>,
    channel_id: Uuid,
    since: Timestamp,
) -> Result<(i64, i64), StoreError> {
    let by_sender: i64 = match sender {
        Some(sender) => {
            Query::new(
                "SELECT COUNT(*) FROM email_messages WHERE company_id = $1 AND mode = $2 \
                 AND sender = $3 AND created_at >= $4 AND direction <> 'out'",
            )
            .bind_tenant(tenant)
            .bind(sender)
            .bind(since)
            .fetch_scalar(&mut *tx)
            .await?
        }
        None => 0,
    };
    let by_channel: i64 = Query::new(
        "SELECT COUNT(*) FROM email_messages WHERE channel_id = $1 AND created_at >= $2 \
         AND direction <> 'out'",
    )
    .bind(channel_id)
    .bind(since)
    .fetch_scalar(&mut *tx)
    .await?;
    Ok((by_sender, by_channel))
}

/// Marks `address` undeliverable (a bounce reported it).
pub async fn mark_undeliverable(
    tx: &mut Tx,
    tenant: &Tenant,
    address: &str,
    reason: &str,
    now: Timestamp,
) -> Result<(), StoreError> {
    Query::new(
        "INSERT INTO email_undeliverable (company_id, mode, address, reason, created_at) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (company_id, mode, address) \
         DO UPDATE SET reason = excluded.reason, created_at = excluded.created_at",
    )
    .bind_tenant(tenant)
    .bind(address)
    .bind(reason)
    .bind(now)
    .execute(&mut *tx)
    .await
}

/// Which of `addresses` are undeliverable.
pub async fn undeliverable(
    tx: &mut Tx,
    tenant: &Tenant,
    addresses: &[String],
) -> Result<Vec<String>, StoreError> {
    if addresses.is_empty() {
        return Ok(Vec::new());
    }
    Query::new(
        "SELECT address FROM email_undeliverable WHERE company_id = $1 AND mode = $2 \
         AND address IN (",
    )
    .bind_tenant(tenant)
    .push_bind_list(addresses.iter().map(String::as_str))
    .push(")")
    .fetch_column(&mut *tx)
    .await
}

/// The email headers of the tenant's comments among `comment_ids`.
pub async fn envelopes(
    tx: &mut Tx,
    tenant: &Tenant,
    comment_ids: &[Uuid],
) -> Result<Vec<(Uuid, Envelope)>, StoreError> {
    if comment_ids.is_empty() {
        return Ok(Vec::new());
    }
    let rows: Vec<(Uuid, Json<Envelope>)> = Query::new(
        "SELECT comment_id, envelope FROM email_messages WHERE company_id = $1 AND mode = $2 \
         AND comment_id IN (",
    )
    .bind_tenant(tenant)
    .push_bind_list(comment_ids.iter().copied())
    .push(")")
    .fetch_all(&mut *tx)
    .await?;
    Ok(rows.into_iter().map(|(id, e)| (id, e.0)).collect())
}
