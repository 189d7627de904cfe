//! The contact a new ticket or chat session is from, found or created in
//! the record's own transaction, so the record and its contact commit
//! together.
//!
//! The order of trust: a verified widget identity first (the customer's
//! backend signed it), then the email (case ignored). When the identity is
//! new and the email belongs to a contact with an identity of its own, the
//! identity wins: a new contact is made for it, and the email stays where
//! it is. An email's contact without an identity takes the new identity
//! when the email was proven; an unproven one is no claim on a contact
//! for a verified identity.

use uuid::Uuid;
use vocab::visitor::Person;

use super::{find, links, write};
use crate::auth::Tenant;
use crate::db::{Query, Tx};
use crate::error::StoreError;
use crate::events;
use crate::model::{self, ContactCreated, NewContact};
use crate::time::{Timestamp, new_id};

/// The contact `person` is, found or created (with `contact.created`);
/// none when the person has neither a verified identity nor an email.
pub async fn contact_of(
    tx: &mut Tx,
    tenant: &Tenant,
    person: &Person,
    now: Timestamp,
) -> Result<Option<Uuid>, StoreError> {
    // An email that is not one is no way to match (the record keeps it as
    // it was given).
    let email = person
        .email
        .as_deref()
        .and_then(|raw| model::email("email", raw).ok());
    let external_id = person
        .external_id
        .as_deref()
        .and_then(|raw| model::external_id("externalId", raw).ok());
    if let Some(external_id) = &external_id
        && let Some(contact) = links::by_identity(tx, tenant, external_id).await?
    {
        if let Some(email) = email.as_deref().filter(|_| person.email_verified) {
            // A proven email of the identity joins it, unless it is taken.
            links::claim_email(tx, tenant, contact, email).await?;
        }
        return Ok(Some(contact));
    }
    if let Some(email) = &email
        && let Some(contact) = links::by_email(tx, tenant, email).await?
    {
        let Some(external_id) = &external_id else {
            return Ok(Some(contact));
        };
        if person.email_verified && !links::has_identity(tx, contact).await? {
            if links::claim_identity(tx, tenant, contact, external_id, now).await? {
                return Ok(Some(contact));
            }
            // Another transaction gave the identity to a contact first.
            return links::by_identity(tx, tenant, external_id).await;
        }
        // The email is another identity's, or unproven: the identity gets
        // a contact of its own.
    }
    if external_id.is_none() && email.is_none() {
        return Ok(None);
    }
    create(tx, tenant, person, external_id, email, now).await
}

/// A new contact for an identity and / or an email that no contact held
/// when looked up. A concurrent transaction that claimed the identity (or,
/// without one, the email) first wins: this contact is dropped and theirs
/// answered.
async fn create(
    tx: &mut Tx,
    tenant: &Tenant,
    person: &Person,
    external_id: Option<String>,
    email: Option<String>,
    now: Timestamp,
) -> Result<Option<Uuid>, StoreError> {
    let id = new_id();
    let name = person
        .name
        .as_deref()
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(|name| name.chars().take(255).collect());
    let new = NewContact {
        name,
        ..NewContact::default()
    };
    write::insert_row(tx, tenant, id, &new, now).await?;
    if let Some(external_id) = &external_id
        && !links::claim_identity(tx, tenant, id, external_id, now).await?
    {
        drop_contact(tx, id).await?;
        return links::by_identity(tx, tenant, external_id).await;
    }
    if let Some(email) = &email
        && !links::claim_email(tx, tenant, id, email).await?
        && external_id.is_none()
    {
        drop_contact(tx, id).await?;
        return links::by_email(tx, tenant, email).await;
    }
    links::join_by_domain(tx, tenant, id).await?;
    let contact = find(&mut *tx, tenant, id).await?;
    events::emit(tx, tenant, &ContactCreated(&contact), now).await?;
    Ok(Some(id))
}

async fn drop_contact(tx: &mut Tx, id: Uuid) -> Result<(), StoreError> {
    Query::new("DELETE FROM contacts WHERE id = $1")
        .bind(id)
        .execute(tx)
        .await
}
