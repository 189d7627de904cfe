//! Contacts and the records they are linked to: the contact of a new
//! ticket or chat session, found or created by the contacts area inside
//! the record's own transaction, a ticket's contact and organisation read
//! for an automation's conditions, and a merge, where the contacts area, the
//! tickets and the chats each move their own rows in one transaction.

use futures::future::BoxFuture;
use uuid::Uuid;
use vocab::visitor::Person;

use crate::auth::Tenant;
use crate::automations::engine::{Parties as RuleParties, PartiesOf};
use crate::chat::store as chat_store;
use crate::contacts::model::Contact;
use crate::contacts::store::{
    self as contact_store, matching, merge as contact_merge, organizations as organization_store,
};
use crate::db::{Db, Tx};
use crate::error::StoreError;
use crate::tickets::store as ticket_store;
use crate::time::Timestamp;

/// The step a ticket's or a chat's create takes for its contact: the
/// contacts area's match, in the create's transaction, stamped `now`.
pub struct Matcher<'s> {
    pub tenant: &'s Tenant,
    pub now: Timestamp,
}

impl Matcher<'_> {
    fn contact<'a>(
        &'a self,
        tx: &'a mut Tx,
        person: &'a Person,
    ) -> BoxFuture<'a, Result<Option<Uuid>, StoreError>> {
        Box::pin(matching::contact_of(tx, self.tenant, person, self.now))
    }
}

impl ticket_store::ContactOf for Matcher<'_> {
    fn contact<'a>(
        &'a self,
        tx: &'a mut Tx,
        person: &'a Person,
    ) -> BoxFuture<'a, Result<Option<Uuid>, StoreError>> {
        Matcher::contact(self, tx, person)
    }
}

impl chat_store::ContactOf for Matcher<'_> {
    fn contact<'a>(
        &'a self,
        tx: &'a mut Tx,
        person: &'a Person,
    ) -> BoxFuture<'a, Result<Option<Uuid>, StoreError>> {
        Matcher::contact(self, tx, person)
    }
}

/// The step automations take to read a ticket's contact and its
/// organisation for their conditions, in the rule's transaction.
pub struct Parties;

impl Parties {
    async fn read(tx: &mut Tx, tenant: &Tenant, id: Uuid) -> Result<RuleParties, StoreError> {
        let contact = match contact_store::find(&mut *tx, tenant, id).await {
            Ok(contact) => contact,
            // Erased or merged away since the ticket named it.
            Err(StoreError::NotFound) => return Ok(RuleParties::default()),
            Err(err) => return Err(err),
        };
        let organization = match contact.organization_id {
            Some(org) => match organization_store::find(&mut *tx, tenant, org).await {
                Ok(found) => Some(serde_json::to_value(found)?),
                Err(StoreError::NotFound) => None,
                Err(err) => return Err(err),
            },
            None => None,
        };
        Ok(RuleParties {
            contact: Some(serde_json::to_value(contact)?),
            organization,
        })
    }
}

impl PartiesOf for Parties {
    fn parties<'a>(
        &'a self,
        tx: &'a mut Tx,
        tenant: &'a Tenant,
        contact: Uuid,
    ) -> BoxFuture<'a, Result<RuleParties, StoreError>> {
        Box::pin(Parties::read(tx, tenant, contact))
    }
}

/// What a merge did.
pub struct Merged {
    /// The contact that remains, as it now is.
    pub contact: Contact,
    pub moved_tickets: usize,
    pub moved_chats: usize,
}

/// Merges the tenant's contact `from` into `into`: its tickets and chats
/// (every one, whatever team), then its emails and identities, move to
/// `into`; `from` is deleted and `contact.merged` emitted, all in one
/// transaction.
pub async fn merge(
    db: &Db,
    tenant: &Tenant,
    from: Uuid,
    into: Uuid,
    now: Timestamp,
) -> Result<Merged, StoreError> {
    let mut tx = db.begin().await?;
    let (source, target) = contact_merge::check(&mut tx, tenant, from, into, now).await?;
    let moved_tickets = ticket_store::move_contact(&mut tx, tenant, from, into).await?;
    let moved_chats = chat_store::move_contact(&mut tx, tenant, from, into).await?;
    let contact = contact_merge::absorb(&mut tx, tenant, source, target, now).await?;
    tx.commit().await?;
    Ok(Merged {
        contact,
        moved_tickets,
        moved_chats,
    })
}
