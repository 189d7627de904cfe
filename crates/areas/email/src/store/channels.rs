//! `email_channels`: a desk address, its inbound source and its SMTP
//! identity. Secrets are sealed with the `email-channels` server secret
//! for the channel's row (infra `sealed`) and never read back to clients.

use serde_json::Value;
use sqlx::types::Json;
use uuid::Uuid;

use super::channel_audit;
use crate::auth::{Mode, Tenant};
use crate::db::{Db, Query, Table, Tx, ensure_reference};
use crate::error::StoreError;
use crate::model::{
    Channel, ChannelSecrets, ImapSettings, Inbound, InboundKind, Smtp, SmtpSettings,
};
use crate::time::{Timestamp, new_id};
use infra::sealed::SealingKey;

/// The server secret channel secrets are sealed with.
pub const SEAL: &str = "email-channels";

const SELECT: &str = "SELECT id, company_id, mode, address, name, entity_id, inbound_kind, \
     inbound, inbound_secret, smtp, smtp_password, dkim_selector, dkim_key, \
     reopen_on_customer_reply, case_grouping_hours, created_at, updated_at FROM email_channels";

/// A channel as written: every field, secrets in the clear (sealed on the
/// way to the row).
#[derive(Debug, Clone)]
pub struct ChannelFields {
    pub address: String,
    pub name: Option<String>,
    pub entity_id: Uuid,
    pub inbound_kind: Option<InboundKind>,
    pub imap: Option<ImapSettings>,
    /// The SNS topic an `ses` channel takes messages from.
    pub ses_topic_arn: Option<String>,
    pub inbound_secret: Option<String>,
    pub smtp: Option<SmtpSettings>,
    pub smtp_password: Option<String>,
    pub dkim_selector: Option<String>,
    pub dkim_key: Option<String>,
    /// Whether a customer's reply reopens a RESOLVED ticket.
    pub reopen_on_customer_reply: bool,
    /// How recent a contact's open ticket is for a new message of theirs
    /// to be suggested as merged into it (0: never).
    pub case_grouping_hours: u32,
}

impl Default for ChannelFields {
    fn default() -> Self {
        ChannelFields {
            address: String::new(),
            name: None,
            entity_id: Uuid::nil(),
            inbound_kind: None,
            imap: None,
            ses_topic_arn: None,
            inbound_secret: None,
            smtp: None,
            smtp_password: None,
            dkim_selector: None,
            dkim_key: None,
            // A customer's answer to a resolved ticket reopens it unless
            // the channel says otherwise.
            reopen_on_customer_reply: true,
            case_grouping_hours: DEFAULT_CASE_GROUPING_HOURS,
        }
    }
}

/// A contact's follow-up within three days usually continues their case.
pub const DEFAULT_CASE_GROUPING_HOURS: u32 = 72;

#[derive(sqlx::FromRow)]
struct Row {
    id: Uuid,
    company_id: Uuid,
    mode: Mode,
    address: String,
    name: Option<String>,
    entity_id: Uuid,
    inbound_kind: InboundKind,
    inbound: Json<Value>,
    inbound_secret: Option<String>,
    smtp: Option<Json<SmtpSettings>>,
    smtp_password: Option<String>,
    dkim_selector: Option<String>,
    dkim_key: Option<String>,
    reopen_on_customer_reply: bool,
    case_grouping_hours: i64,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl Row {
    fn channel(&self) -> Channel {
        let imap = (self.inbound_kind == InboundKind::Imap)
            .then(|| serde_json::from_value::<ImapSettings>(self.inbound.0.clone()).ok())
            .flatten();
        let webhook_path = self
            .inbound_kind
            .is_webhook()
            .then(|| format!("/inbound/email/{}/{}", self.id, self.inbound_kind));
        Channel {
            id: self.id,
            address: self.address.clone(),
            name: self.name.clone(),
            entity_id: self.entity_id,
            inbound: Inbound {
                kind: self.inbound_kind,
                host: imap.as_ref().map(|i| i.host.clone()),
                port: imap.as_ref().map(|i| i.port),
                tls: imap.as_ref().map(|i| i.tls),
                username: imap.as_ref().map(|i| i.username.clone()),
                folder: imap.as_ref().map(|i| i.folder.clone()),
                topic_arn: self.topic_arn(),
                secret_set: self.inbound_secret.is_some(),
                webhook_path,
            },
            smtp: self.smtp.as_ref().map(|s| Smtp {
                settings: s.0.clone(),
                password_set: self.smtp_password.is_some(),
            }),
            dkim_selector: self.dkim_selector.clone(),
            dkim_key_set: self.dkim_key.is_some(),
            reopen_on_customer_reply: self.reopen_on_customer_reply,
            case_grouping_hours: u32::try_from(self.case_grouping_hours).unwrap_or(0),
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }

    fn topic_arn(&self) -> Option<String> {
        (self.inbound_kind == InboundKind::Ses)
            .then(|| self.inbound.0.get("topicArn")?.as_str().map(str::to_string))
            .flatten()
    }

    fn tenant(&self) -> Option<Tenant> {
        Some(Tenant::new(self.company_id, self.mode))
    }

    fn opened(&self, key: &SealingKey) -> ChannelSecrets {
        let open = |v: &Option<String>| {
            v.as_deref()
                .and_then(|s| key.open(self.id, s))
                .map(|o| o.into_inner())
        };
        ChannelSecrets {
            channel: self.channel(),
            inbound_secret: open(&self.inbound_secret),
            smtp_password: open(&self.smtp_password),
            dkim_key: open(&self.dkim_key),
        }
    }

    /// The fields as stored, secrets opened: the base a change applies to.
    fn fields(&self, key: &SealingKey) -> ChannelFields {
        let opened = self.opened(key);
        ChannelFields {
            address: self.address.clone(),
            name: self.name.clone(),
            entity_id: self.entity_id,
            inbound_kind: Some(self.inbound_kind),
            imap: (self.inbound_kind == InboundKind::Imap)
                .then(|| serde_json::from_value(self.inbound.0.clone()).ok())
                .flatten(),
            ses_topic_arn: self.topic_arn(),
            inbound_secret: opened.inbound_secret,
            smtp: self.smtp.as_ref().map(|s| s.0.clone()),
            smtp_password: opened.smtp_password,
            dkim_selector: self.dkim_selector.clone(),
            dkim_key: opened.dkim_key,
            reopen_on_customer_reply: self.reopen_on_customer_reply,
            case_grouping_hours: u32::try_from(self.case_grouping_hours).unwrap_or(0),
        }
    }
}

/// A failure that is no caller's fault.
fn broken(message: &str) -> StoreError {
    StoreError::Database(sqlx::Error::Protocol(message.to_string()))
}

fn seal(key: &SealingKey, id: Uuid, value: Option<&str>) -> Result<Option<String>, StoreError> {
    value
        .map(|v| {
            key.seal(id, v)
                .ok_or_else(|| broken("sealing a channel secret failed"))
        })
        .transpose()
}

async fn write(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    fields: &ChannelFields,
    key: &SealingKey,
    now: Timestamp,
    insert: bool,
) -> Result<(), StoreError> {
    ensure_reference(
        &mut *tx,
        tenant.company_id,
        Table::Entities,
        fields.entity_id,
        "entityId",
    )
    .await?;
    let kind = fields.inbound_kind.unwrap_or(InboundKind::Imap);
    let inbound = match &fields.imap {
        Some(imap) if kind == InboundKind::Imap => {
            serde_json::to_value(imap).map_err(|e| broken(&e.to_string()))?
        }
        _ => match (&fields.ses_topic_arn, kind) {
            (Some(topic), InboundKind::Ses) => serde_json::json!({"topicArn": topic}),
            _ => Value::Object(Default::default()),
        },
    };
    let smtp = fields
        .smtp
        .as_ref()
        .map(serde_json::to_value)
        .transpose()
        .map_err(|e| broken(&e.to_string()))?;
    let sql = if insert {
        "INSERT INTO email_channels (id, company_id, mode, address, name, entity_id, \
         inbound_kind, inbound, inbound_secret, smtp, smtp_password, dkim_selector, dkim_key, \
         created_at, updated_at, reopen_on_customer_reply, case_grouping_hours) VALUES ($1, $2, \
         $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14, $15, $16)"
    } else {
        "UPDATE email_channels SET address = $4, name = $5, entity_id = $6, inbound_kind = $7, \
         inbound = $8, inbound_secret = $9, smtp = $10, smtp_password = $11, dkim_selector = $12, \
         dkim_key = $13, updated_at = $14, reopen_on_customer_reply = $15, case_grouping_hours = $16 WHERE id = $1 AND company_id = $2 AND mode = $3"
    };
    Query::new(sql)
        .bind(id)
        .bind_tenant(tenant)
        .bind(&fields.address)
        .bind(fields.name.as_deref())
        .bind(fields.entity_id)
        .bind(kind)
        .bind(inbound)
        .bind(seal(key, id, fields.inbound_secret.as_deref())?)
        .bind(smtp)
        .bind(seal(key, id, fields.smtp_password.as_deref())?)
        .bind(fields.dkim_selector.as_deref())
        .bind(seal(key, id, fields.dkim_key.as_deref())?)
        .bind(now)
        .bind(fields.reopen_on_customer_reply)
        .bind(i64::from(fields.case_grouping_hours))
        .unique_field("address")
        .execute_or_not_found(&mut *tx)
        .await
}

/// Creates a channel; an address the tenant already has is a 409.
pub async fn create(
    db: &Db,
    tenant: &Tenant,
    fields: &ChannelFields,
    key: &SealingKey,
    now: Timestamp,
) -> Result<Channel, StoreError> {
    let id = new_id();
    let mut tx = db.begin().await?;
    write(&mut tx, tenant, id, fields, key, now, true).await?;
    let channel = find_in(&mut tx, tenant, id).await?;
    channel_audit::created(&mut tx, tenant, &channel, fields, now).await?;
    tx.commit().await?;
    Ok(channel)
}

/// Applies `change` to the channel's fields as stored (secrets opened) and
/// writes them back; None (nothing written) when `change` refuses.
pub async fn update(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    change: impl FnOnce(&mut ChannelFields) -> bool,
    key: &SealingKey,
    now: Timestamp,
) -> Result<Option<Channel>, StoreError> {
    let mut tx = db.begin().await?;
    let row = row(&mut tx, tenant, id).await?;
    let mut fields = row.fields(key);
    let was = (row.channel(), fields.clone());
    if !change(&mut fields) {
        return Ok(None);
    }
    write(&mut tx, tenant, id, &fields, key, now, false).await?;
    let channel = find_in(&mut tx, tenant, id).await?;
    let is = (&channel, &fields);
    channel_audit::updated(&mut tx, tenant, (&was.0, &was.1), is, now).await?;
    tx.commit().await?;
    Ok(Some(channel))
}

async fn row(tx: &mut Tx, tenant: &Tenant, id: Uuid) -> Result<Row, StoreError> {
    let found: Option<Row> = Query::new(SELECT)
        .push(" WHERE id = ")
        .push_bind(id)
        .push(" AND ")
        .push_tenant(tenant, "email_channels")
        .fetch_optional(&mut *tx)
        .await?;
    found.ok_or(StoreError::NotFound)
}

/// The tenant's channel `id`, inside a transaction.
pub async fn find_in(tx: &mut Tx, tenant: &Tenant, id: Uuid) -> Result<Channel, StoreError> {
    Ok(row(tx, tenant, id).await?.channel())
}

/// The tenant's channel `id`.
pub async fn find(db: &Db, tenant: &Tenant, id: Uuid) -> Result<Channel, StoreError> {
    let mut tx = db.begin().await?;
    let channel = find_in(&mut tx, tenant, id).await?;
    tx.commit().await?;
    Ok(channel)
}

/// The tenant's channels, oldest first (a company has a handful).
pub async fn list(db: &Db, tenant: &Tenant) -> Result<Vec<Channel>, StoreError> {
    let rows: Vec<Row> = Query::new(SELECT)
        .push(" WHERE ")
        .push_tenant(tenant, "email_channels")
        .push(" ORDER BY created_at, id")
        .fetch_all(db)
        .await?;
    Ok(rows.iter().map(Row::channel).collect())
}

/// Deletes the tenant's channel `id` (its tickets stay).
pub async fn delete(db: &Db, tenant: &Tenant, id: Uuid, now: Timestamp) -> Result<(), StoreError> {
    let mut tx = db.begin().await?;
    let channel = find_in(&mut tx, tenant, id).await?;
    Query::new("DELETE FROM email_channels WHERE id = $1 AND company_id = $2 AND mode = $3")
        .bind(id)
        .bind_tenant(tenant)
        .execute_or_not_found(&mut tx)
        .await?;
    channel_audit::deleted(&mut tx, tenant, &channel, now).await?;
    tx.commit().await
}

/// Any tenant's channel `id` with its secrets and its tenant: what an
/// inbound webhook (which has no API key) knows it by.
pub async fn find_any(
    db: &Db,
    id: Uuid,
    key: &SealingKey,
) -> Result<Option<(Tenant, ChannelSecrets)>, StoreError> {
    let found: Option<Row> = Query::new(SELECT)
        .push(" WHERE id = ")
        .push_bind(id)
        .fetch_optional(db)
        .await?;
    Ok(found.and_then(|row| Some((row.tenant()?, row.opened(key)))))
}

/// Every channel that reads an IMAP mailbox, with its tenant and secrets
/// (the IMAP reader's list).
pub async fn imap_channels(
    db: &Db,
    key: &SealingKey,
) -> Result<Vec<(Tenant, ChannelSecrets)>, StoreError> {
    let rows: Vec<Row> = Query::new(SELECT)
        .push(" WHERE inbound_kind = 'imap' ORDER BY created_at, id")
        .fetch_all(db)
        .await?;
    Ok(rows
        .iter()
        .filter_map(|row| Some((row.tenant()?, row.opened(key))))
        .collect())
}
