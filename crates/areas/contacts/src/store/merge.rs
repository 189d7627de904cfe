//! Merging one contact into another: the contacts' side. The merge runs in
//! one transaction: [`check`] reads both (locking them), the sequence above
//! moves the tickets and chats of the merged contact with their own
//! stores, then [`absorb`] moves its emails and identities, fills what the
//! remaining contact lacks, deletes the merged one and emits
//! `contact.merged`.

use serde_json::Value;
use uuid::Uuid;

use super::find;
use crate::auth::Tenant;
use crate::db::{Query, Tx};
use crate::error::StoreError;
use crate::events;
use crate::model::{Contact, ContactMerged};
use crate::time::Timestamp;

/// The contact merged (`from`: absent is a 404) and the one it goes into
/// (`into`: absent, or `from` itself, is a 400 on `into`), both locked.
pub async fn check(
    tx: &mut Tx,
    tenant: &Tenant,
    from: Uuid,
    into: Uuid,
    now: Timestamp,
) -> Result<(Contact, Contact), StoreError> {
    touch(tx, tenant, from, now).await?;
    if from == into {
        return Err(invalid_into("must be another contact"));
    }
    touch(tx, tenant, into, now)
        .await
        .map_err(|err| match err {
            StoreError::NotFound => invalid_into("must be a contact of the key's company and mode"),
            other => other,
        })?;
    Ok((
        find(&mut *tx, tenant, from).await?,
        find(&mut *tx, tenant, into).await?,
    ))
}

/// Moves `source`'s emails (after `target`'s) and identities to `target`,
/// gives `target` the name, phone, organisation and notes it lacks, the
/// union of both tags and the custom fields it lacks, deletes `source` and
/// emits `contact.merged`. Answers `target` as it now is.
pub async fn absorb(
    tx: &mut Tx,
    tenant: &Tenant,
    source: Contact,
    target: Contact,
    now: Timestamp,
) -> Result<Contact, StoreError> {
    let offset: i64 = Query::new(
        "SELECT CAST(COALESCE(MAX(position) + 1, 0) AS BIGINT) FROM contact_emails \
         WHERE contact_id = $1",
    )
    .bind(target.id)
    .fetch_scalar(&mut *tx)
    .await?;
    Query::new(
        "UPDATE contact_emails SET contact_id = $1, position = position + $2 WHERE contact_id = $3",
    )
    .bind(target.id)
    .bind(offset)
    .bind(source.id)
    .execute(&mut *tx)
    .await?;
    Query::new("UPDATE contact_identities SET contact_id = $1 WHERE contact_id = $2")
        .bind(target.id)
        .bind(source.id)
        .execute(&mut *tx)
        .await?;
    let mut tags = target.tags.clone();
    tags.extend(source.tags.iter().cloned());
    tags.sort();
    tags.dedup();
    let mut fields = source.custom_fields.clone();
    fields.extend(target.custom_fields.clone());
    Query::new(
        "UPDATE contacts SET name = $1, phone = $2, organization_id = $3, notes = $4, \
         tags = $5, custom_fields = $6, updated_at = $7 WHERE id = $8",
    )
    .bind(target.name.clone().or(source.name.clone()))
    .bind(target.phone.clone().or(source.phone.clone()))
    .bind(target.organization_id.or(source.organization_id))
    .bind(target.notes.clone().or(source.notes.clone()))
    .bind(serde_json::json!(tags))
    .bind(Value::Object(fields))
    .bind(now)
    .bind(target.id)
    .execute(&mut *tx)
    .await?;
    Query::new("DELETE FROM contacts WHERE id = $1")
        .bind(source.id)
        .execute(&mut *tx)
        .await?;
    let contact = find(&mut *tx, tenant, target.id).await?;
    let payload = ContactMerged {
        contact: &contact,
        merged_contact_id: source.id,
    };
    events::emit(tx, tenant, &payload, now).await?;
    Ok(contact)
}

/// Locks the tenant's contact `id` (NotFound when it is none of theirs).
async fn touch(tx: &mut Tx, tenant: &Tenant, id: Uuid, now: Timestamp) -> Result<(), StoreError> {
    Query::new(
        "UPDATE contacts SET updated_at = $1 WHERE id = $2 AND company_id = $3 AND mode = $4",
    )
    .bind(now)
    .bind(id)
    .bind_tenant(tenant)
    .execute_or_not_found(tx)
    .await
}

fn invalid_into(message: &str) -> StoreError {
    StoreError::InvalidReference {
        field: "into".into(),
        message: message.into(),
    }
}
