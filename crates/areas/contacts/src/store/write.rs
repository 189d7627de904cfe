//! Creating, changing and deleting a contact by hand (`/contacts`).

use serde_json::Value;
use uuid::Uuid;

use super::{find, links};
use crate::auth::Tenant;
use crate::db::{Db, Query, Tx};
use crate::error::StoreError;
use crate::events;
use crate::model::{Contact, ContactChanges, ContactCreated, NewContact};
use crate::time::{Timestamp, new_id};

/// Creates a contact with its emails and identity, joined to the
/// organisation named or else to the one of an email's domain, and emits
/// `contact.created`. An email or identity another contact holds is a 409.
pub async fn create(
    db: &Db,
    tenant: &Tenant,
    new: NewContact,
    now: Timestamp,
) -> Result<Contact, StoreError> {
    let mut tx = db.begin().await?;
    if let Some(organization) = new.organization_id {
        ensure_organization(&mut tx, tenant, organization).await?;
    }
    let id = new_id();
    insert_row(&mut tx, tenant, id, &new, now).await?;
    links::add_emails(&mut tx, tenant, id, &new.emails).await?;
    if let Some(external_id) = &new.external_id {
        links::add_identity(&mut tx, tenant, id, external_id, now).await?;
    }
    links::join_by_domain(&mut tx, tenant, id).await?;
    let contact = find(&mut tx, tenant, id).await?;
    events::emit(&mut tx, tenant, &ContactCreated(&contact), now).await?;
    tx.commit().await?;
    Ok(contact)
}

/// The row of a new contact (no emails or identities yet).
pub(super) async fn insert_row(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    new: &NewContact,
    now: Timestamp,
) -> Result<(), StoreError> {
    Query::new(
        "INSERT INTO contacts (id, company_id, mode, name, phone, organization_id, \
         custom_fields, tags, notes, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)",
    )
    .bind(id)
    .bind_tenant(tenant)
    .bind(new.name.as_deref())
    .bind(new.phone.as_deref())
    .bind(new.organization_id)
    .bind(Value::Object(new.custom_fields.clone()))
    .bind(serde_json::json!(new.tags))
    .bind(new.notes.as_deref())
    .bind(now)
    .execute(tx)
    .await
}

/// Applies `changes` to the tenant's contact `id`; emails and identity
/// given replace the contact's. Without an organisation afterwards, an
/// email's domain joins it to one.
pub async fn update(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    changes: ContactChanges,
    now: Timestamp,
) -> Result<Contact, StoreError> {
    let mut tx = db.begin().await?;
    // Locks the row: concurrent changes of one contact take turns.
    Query::new(
        "UPDATE contacts SET updated_at = $1 WHERE id = $2 AND company_id = $3 AND mode = $4",
    )
    .bind(now)
    .bind(id)
    .bind_tenant(tenant)
    .execute_or_not_found(&mut tx)
    .await?;
    if let Some(Some(organization)) = changes.organization_id {
        ensure_organization(&mut tx, tenant, organization).await?;
    }
    let current = find(&mut tx, tenant, id).await?;
    Query::new(
        "UPDATE contacts SET name = $1, phone = $2, organization_id = $3, custom_fields = $4, \
         tags = $5, notes = $6 WHERE id = $7",
    )
    .bind(changes.name.unwrap_or(current.name))
    .bind(changes.phone.unwrap_or(current.phone))
    .bind(changes.organization_id.unwrap_or(current.organization_id))
    .bind(Value::Object(
        changes.custom_fields.unwrap_or(current.custom_fields),
    ))
    .bind(serde_json::json!(changes.tags.unwrap_or(current.tags)))
    .bind(changes.notes.unwrap_or(current.notes))
    .bind(id)
    .execute(&mut tx)
    .await?;
    if let Some(emails) = &changes.emails {
        Query::new("DELETE FROM contact_emails WHERE contact_id = $1")
            .bind(id)
            .execute(&mut tx)
            .await?;
        links::add_emails(&mut tx, tenant, id, emails).await?;
    }
    if let Some(external_id) = &changes.external_id {
        Query::new("DELETE FROM contact_identities WHERE contact_id = $1")
            .bind(id)
            .execute(&mut tx)
            .await?;
        if let Some(external_id) = external_id {
            links::add_identity(&mut tx, tenant, id, external_id, now).await?;
        }
    }
    links::join_by_domain(&mut tx, tenant, id).await?;
    let contact = find(&mut tx, tenant, id).await?;
    tx.commit().await?;
    Ok(contact)
}

/// Deletes the tenant's contact `id` with its emails and identities; its
/// tickets and chats keep existing without a contact.
pub async fn delete(db: &Db, tenant: &Tenant, id: Uuid) -> Result<(), StoreError> {
    Query::new("DELETE FROM contacts WHERE id = $1 AND company_id = $2 AND mode = $3")
        .bind(id)
        .bind_tenant(tenant)
        .execute_or_not_found(db)
        .await
}

/// A 400 on `organizationId` unless it names an organisation of the tenant.
async fn ensure_organization(
    tx: &mut Tx,
    tenant: &Tenant,
    organization: Uuid,
) -> Result<(), StoreError> {
    let found: Option<(Uuid,)> =
        Query::new("SELECT id FROM organizations WHERE id = $1 AND company_id = $2 AND mode = $3")
            .bind(organization)
            .bind_tenant(tenant)
            .fetch_optional(tx)
            .await?;
    match found {
        Some(_) => Ok(()),
        None => Err(StoreError::InvalidReference {
            field: "organizationId".into(),
            message: "must be an organization of the key's company and mode".into(),
        }),
    }
}
