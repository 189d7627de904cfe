//! A contact's emails and identities, and the organisation an email's
//! domain joins it to. Each write runs in the caller's transaction.

use uuid::Uuid;

use crate::auth::Tenant;
use crate::db::{Query, Tx};
use crate::error::StoreError;
use crate::model::domain_of;
use crate::time::Timestamp;

/// Gives the contact `emails` after the ones it has. One another contact
/// of the tenant holds is a 409 on `emails`.
pub(super) async fn add_emails(
    tx: &mut Tx,
    tenant: &Tenant,
    contact: Uuid,
    emails: &[String],
) -> Result<(), StoreError> {
    if emails.is_empty() {
        return Ok(());
    }
    let first = next_position(tx, contact).await?;
    let mut query = Query::new(
        "INSERT INTO contact_emails (company_id, mode, email, domain, contact_id, position) VALUES ",
    );
    for (i, email) in emails.iter().enumerate() {
        if i > 0 {
            query = query.push(", ");
        }
        query = query
            .push("(")
            .push_bind(tenant.company_id)
            .push(", ")
            .push_bind(tenant.mode.as_str())
            .push(", ")
            .push_bind(email.as_str())
            .push(", ")
            .push_bind(domain_of(email))
            .push(", ")
            .push_bind(contact)
            .push(", ")
            .push_bind(first + i as i64)
            .push(")");
    }
    query.unique_field("emails").execute(tx).await
}

/// Gives the contact `email` unless a contact holds it already; whether it
/// did. A concurrent transaction adding it first makes this wait for its
/// end, then hold nothing.
pub(super) async fn claim_email(
    tx: &mut Tx,
    tenant: &Tenant,
    contact: Uuid,
    email: &str,
) -> Result<bool, StoreError> {
    let position = next_position(tx, contact).await?;
    let claimed = optional_id(
        Query::new(
            "INSERT INTO contact_emails (company_id, mode, email, domain, contact_id, position) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING contact_id",
        )
        .bind_tenant(tenant)
        .bind(email)
        .bind(domain_of(email))
        .bind(contact)
        .bind(position),
        tx,
    )
    .await?;
    Ok(claimed.is_some())
}

/// Gives the contact the identity `external_id` unless a contact holds it
/// already; whether it did (a concurrent claim as in [`claim_email`]).
pub(super) async fn claim_identity(
    tx: &mut Tx,
    tenant: &Tenant,
    contact: Uuid,
    external_id: &str,
    now: Timestamp,
) -> Result<bool, StoreError> {
    let claimed = optional_id(Query::new(
        "INSERT INTO contact_identities (company_id, mode, external_id, contact_id, created_at) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING contact_id",
    )
    .bind_tenant(tenant)
    .bind(external_id)
    .bind(contact)
    .bind(now), tx)
    .await?;
    Ok(claimed.is_some())
}

/// Gives the contact the identity `external_id`; one another contact
/// holds is a 409 on `externalId`.
pub(super) async fn add_identity(
    tx: &mut Tx,
    tenant: &Tenant,
    contact: Uuid,
    external_id: &str,
    now: Timestamp,
) -> Result<(), StoreError> {
    Query::new(
        "INSERT INTO contact_identities (company_id, mode, external_id, contact_id, created_at) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind_tenant(tenant)
    .bind(external_id)
    .bind(contact)
    .bind(now)
    .unique_field("externalId")
    .execute(tx)
    .await
}

/// The contact holding `email` (lower-cased), if any.
pub(super) async fn by_email(
    tx: &mut Tx,
    tenant: &Tenant,
    email: &str,
) -> Result<Option<Uuid>, StoreError> {
    let query = Query::new(
        "SELECT contact_id FROM contact_emails WHERE email = $1 AND company_id = $2 AND mode = $3",
    );
    optional_id(query.bind(email).bind_tenant(tenant), tx).await
}

/// The contact holding the identity `external_id`, if any.
pub(super) async fn by_identity(
    tx: &mut Tx,
    tenant: &Tenant,
    external_id: &str,
) -> Result<Option<Uuid>, StoreError> {
    let query = Query::new(
        "SELECT contact_id FROM contact_identities \
         WHERE external_id = $1 AND company_id = $2 AND mode = $3",
    );
    optional_id(query.bind(external_id).bind_tenant(tenant), tx).await
}

/// Whether the contact holds any identity.
pub(super) async fn has_identity(tx: &mut Tx, contact: Uuid) -> Result<bool, StoreError> {
    let query =
        Query::new("SELECT contact_id FROM contact_identities WHERE contact_id = $1 LIMIT 1");
    let found = optional_id(query.bind(contact), tx).await?;
    Ok(found.is_some())
}

/// Joins a contact without an organisation to the one whose domain its
/// first email (in its order) with such a domain is at.
pub(super) async fn join_by_domain(
    tx: &mut Tx,
    tenant: &Tenant,
    contact: Uuid,
) -> Result<(), StoreError> {
    Query::new(
        "UPDATE contacts SET organization_id = (SELECT d.organization_id FROM contact_emails e \
         JOIN organization_domains d ON d.company_id = e.company_id AND d.mode = e.mode \
         AND d.domain = e.domain WHERE e.contact_id = $1 ORDER BY e.position LIMIT 1) \
         WHERE id = $1 AND company_id = $2 AND mode = $3 AND organization_id IS NULL",
    )
    .bind(contact)
    .bind_tenant(tenant)
    .execute(tx)
    .await
}

/// The position after the contact's last email.
async fn next_position(tx: &mut Tx, contact: Uuid) -> Result<i64, StoreError> {
    Query::new(
        "SELECT CAST(COALESCE(MAX(position) + 1, 0) AS BIGINT) FROM contact_emails \
         WHERE contact_id = $1",
    )
    .bind(contact)
    .fetch_scalar(tx)
    .await
}

/// The one id `query` reads, if it reads a row.
async fn optional_id(query: Query, tx: &mut Tx) -> Result<Option<Uuid>, StoreError> {
    let row: Option<(Uuid,)> = query.fetch_optional(tx).await?;
    Ok(row.map(|(id,)| id))
}
