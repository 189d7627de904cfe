//! SQL for organisations and their domains. A domain is one organisation's
//! in a tenant; giving an organisation a domain collects the contacts
//! without an organisation that have an email there.

use std::collections::HashMap;

use serde_json::{Map, Value};
use sqlx::types::Json;
use uuid::Uuid;

use crate::auth::Tenant;
use crate::db::{Db, On, Query, Tx};
use crate::error::StoreError;
use crate::model::{NewOrganization, Organization, OrganizationChanges};
use crate::paging::{After, Order, Total, push_after};
use crate::time::{Timestamp, new_id};
use crate::validate::Page;

const COLUMNS: &str = "o.id, o.name, o.custom_fields, o.created_at, o.updated_at";

#[derive(sqlx::FromRow)]
struct OrganizationRow {
    id: Uuid,
    name: String,
    custom_fields: Json<Map<String, Value>>,
    created_at: Timestamp,
    updated_at: Timestamp,
}

/// Creates an organisation with its domains (one another organisation of
/// the tenant holds is a 409 on `domains`), collecting their contacts.
pub async fn create(
    db: &Db,
    tenant: &Tenant,
    new: NewOrganization,
    now: Timestamp,
) -> Result<Organization, StoreError> {
    let mut tx = db.begin().await?;
    let id = new_id();
    Query::new(
        "INSERT INTO organizations (id, company_id, mode, name, custom_fields, created_at, \
         updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6)",
    )
    .bind(id)
    .bind_tenant(tenant)
    .bind(new.name.as_str())
    .bind(Value::Object(new.custom_fields))
    .bind(now)
    .execute(&mut tx)
    .await?;
    add_domains(&mut tx, tenant, id, &new.domains, now).await?;
    let organization = find(&mut tx, tenant, id).await?;
    tx.commit().await?;
    Ok(organization)
}

/// The tenant's organisation `id`.
pub async fn find<'c>(
    on: impl Into<On<'c>>,
    tenant: &Tenant,
    id: Uuid,
) -> Result<Organization, StoreError> {
    let mut on = on.into();
    let row: OrganizationRow = Query::new(format!(
        "SELECT {COLUMNS} FROM organizations o WHERE o.id = "
    ))
    .push_bind(id)
    .push(" AND ")
    .push_tenant(tenant, "o")
    .fetch_one(on.reborrow())
    .await?;
    let mut organizations = complete(on, vec![row]).await?;
    organizations.pop().ok_or(StoreError::NotFound)
}

/// A page of the tenant's organisations, newest first (`page.limit + 1`
/// read), and how many there are.
pub async fn list(
    db: &Db,
    tenant: &Tenant,
    page: Page,
    after: Option<&After>,
) -> Result<(Vec<Organization>, Total), StoreError> {
    let rows: Vec<OrganizationRow> = push_after(
        Query::new(format!("SELECT {COLUMNS} FROM organizations o WHERE "))
            .push_tenant(tenant, "o"),
        "o",
        after,
        Order::NewestFirst,
    )
    .push(" ORDER BY o.created_at DESC, o.id DESC LIMIT ")
    .push_bind(page.limit + 1)
    .push(" OFFSET ")
    .push_bind(page.offset)
    .fetch_all(db)
    .await?;
    let total: i64 = Query::new("SELECT COUNT(*) FROM organizations o WHERE ")
        .push_tenant(tenant, "o")
        .fetch_scalar(db)
        .await?;
    Ok((complete(db, rows).await?, Total::exact(total)))
}

/// Applies `changes`; domains given replace the organisation's, and the
/// new ones collect their contacts.
pub async fn update(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    changes: OrganizationChanges,
    now: Timestamp,
) -> Result<Organization, StoreError> {
    let mut tx = db.begin().await?;
    let current = find(&mut tx, tenant, id).await?;
    Query::new(
        "UPDATE organizations SET name = $1, custom_fields = $2, updated_at = $3 \
         WHERE id = $4 AND company_id = $5 AND mode = $6",
    )
    .bind(changes.name.unwrap_or(current.name))
    .bind(Value::Object(
        changes.custom_fields.unwrap_or(current.custom_fields),
    ))
    .bind(now)
    .bind(id)
    .bind_tenant(tenant)
    .execute_or_not_found(&mut tx)
    .await?;
    if let Some(domains) = &changes.domains {
        Query::new("DELETE FROM organization_domains WHERE organization_id = $1")
            .bind(id)
            .execute(&mut tx)
            .await?;
        add_domains(&mut tx, tenant, id, domains, now).await?;
    }
    let organization = find(&mut tx, tenant, id).await?;
    tx.commit().await?;
    Ok(organization)
}

/// Deletes the tenant's organisation `id`; its contacts stay, without one.
pub async fn delete(db: &Db, tenant: &Tenant, id: Uuid) -> Result<(), StoreError> {
    Query::new("DELETE FROM organizations WHERE id = $1 AND company_id = $2 AND mode = $3")
        .bind(id)
        .bind_tenant(tenant)
        .execute_or_not_found(db)
        .await
}

/// Gives the organisation `domains` and collects the tenant's contacts
/// without an organisation that have an email at one of them.
async fn add_domains(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    domains: &[String],
    now: Timestamp,
) -> Result<(), StoreError> {
    if domains.is_empty() {
        return Ok(());
    }
    let mut insert = Query::new(
        "INSERT INTO organization_domains (company_id, mode, domain, organization_id, position) \
         VALUES ",
    );
    for (i, domain) in domains.iter().enumerate() {
        if i > 0 {
            insert = insert.push(", ");
        }
        insert = insert
            .push("(")
            .push_bind(tenant.company_id)
            .push(", ")
            .push_bind(tenant.mode.as_str())
            .push(", ")
            .push_bind(domain.as_str())
            .push(", ")
            .push_bind(id)
            .push(", ")
            .push_bind(i as i64)
            .push(")");
    }
    insert.unique_field("domains").execute(&mut *tx).await?;
    Query::new("UPDATE contacts SET organization_id = ")
        .push_bind(id)
        .push(", updated_at = ")
        .push_bind(now)
        .push(" WHERE organization_id IS NULL AND ")
        .push_tenant(tenant, "")
        .push(" AND id IN (SELECT e.contact_id FROM contact_emails e WHERE ")
        .push_tenant(tenant, "e")
        .push(" AND e.domain IN ")
        .push_bind_list(domains.iter().map(String::as_str))
        .push(")")
        .execute(tx)
        .await
}

/// The organisations of `rows` with their domains (one query for all).
async fn complete<'c>(
    on: impl Into<On<'c>>,
    rows: Vec<OrganizationRow>,
) -> Result<Vec<Organization>, StoreError> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let domains: Vec<(Uuid, String)> = Query::new(
        "SELECT organization_id, domain FROM organization_domains WHERE organization_id IN ",
    )
    .push_bind_list(rows.iter().map(|row| row.id))
    .push(" ORDER BY position")
    .fetch_all(on)
    .await?;
    let mut domains_of: HashMap<Uuid, Vec<String>> = HashMap::new();
    for (organization, domain) in domains {
        domains_of.entry(organization).or_default().push(domain);
    }
    Ok(rows
        .into_iter()
        .map(|row| Organization {
            id: row.id,
            domains: domains_of.remove(&row.id).unwrap_or_default(),
            name: row.name,
            custom_fields: row.custom_fields.0,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
        .collect())
}
