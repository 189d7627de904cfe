//! SQL for contacts and organisations: the only place that reads or writes
//! their tables. A contact's row (`contacts`) holds its own fields; its
//! emails (`contact_emails`, unique per tenant, lower-cased) and its
//! verified widget identities (`contact_identities`, unique per tenant)
//! are rows of their own, so a match is one index probe and a merge moves
//! them by changing their owner.
//!
//! Here are the reads; `write` creates, changes and deletes contacts,
//! `links` writes emails and identities, `matching` finds or creates the
//! contact of a new ticket or chat, `merge` folds one contact into another
//! and `organizations` keeps organisations and their domains.

pub mod erase;
pub mod jobs;
mod links;
pub mod matching;
pub mod merge;
pub mod organizations;
mod write;

pub use write::{create, delete, update};

use std::collections::HashMap;

use serde_json::{Map, Value};
use sqlx::types::Json;
use uuid::Uuid;

use crate::auth::Tenant;
use crate::db::{Db, On, Query};
use crate::error::StoreError;
use crate::model::Contact;
use crate::paging::{After, COUNT_CAP, Order, Total, capped_count, push_after};
use crate::time::Timestamp;
use crate::validate::Page;

const COLUMNS: &str = "c.id, c.name, c.phone, c.organization_id, c.custom_fields, c.tags, \
     c.notes, c.created_at, c.updated_at";

#[derive(sqlx::FromRow)]
struct ContactRow {
    id: Uuid,
    name: Option<String>,
    phone: Option<String>,
    organization_id: Option<Uuid>,
    custom_fields: Json<Map<String, Value>>,
    tags: Json<Vec<String>>,
    notes: Option<String>,
    created_at: Timestamp,
    updated_at: Timestamp,
}

/// `GET /contacts` filters.
#[derive(Debug, Clone, Default)]
pub struct ContactFilter {
    /// Part of a name or an email, case ignored.
    pub search: Option<String>,
    pub organization_id: Option<Uuid>,
}

/// The tenant's contact `id`.
pub async fn find<'c>(
    on: impl Into<On<'c>>,
    tenant: &Tenant,
    id: Uuid,
) -> Result<Contact, StoreError> {
    let mut on = on.into();
    let row: ContactRow = Query::new(format!("SELECT {COLUMNS} FROM contacts c WHERE c.id = "))
        .push_bind(id)
        .push(" AND ")
        .push_tenant(tenant, "c")
        .fetch_one(on.reborrow())
        .await?;
    let mut contacts = complete(on, vec![row]).await?;
    contacts.pop().ok_or(StoreError::NotFound)
}

/// A page of the tenant's contacts matching `filter`, newest first (read
/// `page.limit + 1`: the extra one says a next page exists), and how many
/// match.
pub async fn list(
    db: &Db,
    tenant: &Tenant,
    filter: &ContactFilter,
    page: Page,
    after: Option<&After>,
) -> Result<(Vec<Contact>, Total), StoreError> {
    let rows: Vec<ContactRow> = push_after(
        matching(
            Query::new(format!("SELECT {COLUMNS} FROM contacts c WHERE ")),
            tenant,
            filter,
        ),
        "c",
        after,
        Order::NewestFirst,
    )
    .push(" ORDER BY c.created_at DESC, c.id DESC LIMIT ")
    .push_bind(page.limit + 1)
    .push(" OFFSET ")
    .push_bind(page.offset)
    .fetch_all(db)
    .await?;
    let total = capped_count(
        db,
        matching(
            Query::new("SELECT 1 FROM contacts c WHERE "),
            tenant,
            filter,
        ),
        COUNT_CAP,
    )
    .await?;
    Ok((complete(db, rows).await?, total))
}

/// The newest `limit` contacts of an organisation.
pub async fn of_organization(
    db: &Db,
    tenant: &Tenant,
    organization: Uuid,
    limit: i64,
) -> Result<Vec<Contact>, StoreError> {
    let filter = ContactFilter {
        organization_id: Some(organization),
        ..ContactFilter::default()
    };
    Ok(list(db, tenant, &filter, Page { limit, offset: 0 }, None)
        .await?
        .0)
}

/// The ids of every contact of an organisation.
pub async fn ids_of_organization(
    db: &Db,
    tenant: &Tenant,
    organization: Uuid,
) -> Result<Vec<Uuid>, StoreError> {
    Query::new("SELECT c.id FROM contacts c WHERE c.organization_id = ")
        .push_bind(organization)
        .push(" AND ")
        .push_tenant(tenant, "c")
        .fetch_column(db)
        .await
}

fn matching(query: Query, tenant: &Tenant, filter: &ContactFilter) -> Query {
    let mut query = query.push_tenant(tenant, "c");
    if let Some(organization) = filter.organization_id {
        query = query
            .push(" AND c.organization_id = ")
            .push_bind(organization);
    }
    if let Some(search) = &filter.search {
        // `%`, `_` and `\` in the search are themselves, not wildcards.
        let escaped = search
            .to_lowercase()
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        let pattern = format!("%{escaped}%");
        let name = query.placeholder_for(pattern.as_str());
        query = query.push(&format!(
            " AND (lower(c.name) LIKE {name} ESCAPE '\\' OR EXISTS (SELECT 1 FROM \
             contact_emails e WHERE e.contact_id = c.id AND e.email LIKE {name} ESCAPE '\\'))"
        ));
    }
    query
}

/// The contacts of `rows` with their emails and identities (one query
/// each for all).
async fn complete<'c>(
    on: impl Into<On<'c>>,
    rows: Vec<ContactRow>,
) -> Result<Vec<Contact>, StoreError> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let mut on = on.into();
    let ids: Vec<Uuid> = rows.iter().map(|row| row.id).collect();
    let emails: Vec<(Uuid, String)> =
        Query::new("SELECT contact_id, email FROM contact_emails WHERE contact_id IN ")
            .push_bind_list(ids.iter().copied())
            .push(" ORDER BY position, email")
            .fetch_all(on.reborrow())
            .await?;
    let identities: Vec<(Uuid, String)> =
        Query::new("SELECT contact_id, external_id FROM contact_identities WHERE contact_id IN ")
            .push_bind_list(ids.iter().copied())
            .push(" ORDER BY created_at, external_id")
            .fetch_all(on)
            .await?;
    let mut emails_of: HashMap<Uuid, Vec<String>> = HashMap::new();
    for (contact, email) in emails {
        emails_of.entry(contact).or_default().push(email);
    }
    let mut identities_of: HashMap<Uuid, Vec<String>> = HashMap::new();
    for (contact, id) in identities {
        identities_of.entry(contact).or_default().push(id);
    }
    Ok(rows
        .into_iter()
        .map(|row| {
            let external_ids = identities_of.remove(&row.id).unwrap_or_default();
            Contact {
                id: row.id,
                name: row.name,
                emails: emails_of.remove(&row.id).unwrap_or_default(),
                phone: row.phone,
                external_id: external_ids.first().cloned(),
                external_ids,
                organization_id: row.organization_id,
                custom_fields: row.custom_fields.0,
                tags: row.tags.0,
                notes: row.notes,
                created_at: row.created_at,
                updated_at: row.updated_at,
            }
        })
        .collect())
}
