//! Erasing a contact's own rows: the words that name the person (read
//! before anything else is erased, since the other areas look for them),
//! and, last of all, the contact itself with its emails and identities,
//! its exports' archives, and `contact.erased`.

use uuid::Uuid;

use super::find;
use crate::auth::Tenant;
use crate::db::{Db, Query, Tx};
use crate::erasure::Person;
use crate::error::StoreError;
use crate::events;
use crate::model::{Contact, ContactErased};
use crate::time::Timestamp;

/// The words that name `contact`: name, emails, phone, external ids, and
/// each email's local part when it is long enough to mean the person.
pub fn person_of(contact: &Contact) -> Person {
    let mut words: Vec<String> = Vec::new();
    words.extend(contact.name.iter().cloned());
    words.extend(contact.phone.iter().cloned());
    words.extend(contact.emails.iter().cloned());
    words.extend(contact.external_ids.iter().cloned());
    Person::new(words)
}

/// The tenant's contact `id` and the words that name them; NotFound once
/// erased.
pub async fn person(db: &Db, tenant: &Tenant, id: Uuid) -> Result<(Contact, Person), StoreError> {
    let contact = find(db, tenant, id).await?;
    let person = person_of(&contact);
    Ok((contact, person))
}

/// Deletes the contact (its emails and identities go by cascade), drops
/// its exports' archives and emits `contact.erased`, in `tx`; false when
/// it was already gone.
pub async fn delete(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    now: Timestamp,
) -> Result<bool, StoreError> {
    super::jobs::drop_archives(tx, tenant, id).await?;
    let deleted =
        Query::new("DELETE FROM contacts WHERE id = $1 AND company_id = $2 AND mode = $3")
            .bind(id)
            .bind_tenant(tenant)
            .rows_affected(&mut *tx)
            .await?;
    if deleted == 0 {
        return Ok(false);
    }
    events::emit(tx, tenant, &ContactErased { contact_id: id }, now).await?;
    Ok(true)
}
