//! What every step of an automations pass shares: the pass's context
//! with the steps of other areas the service passes in (a chat's side, a
//! ticket's contact and organisation), what a rule did, and whether a
//! rule's conditions hold. The engine (`engine`), a rule's actions
//! (`apply`) and the rules on a chat (`chat`) all build on it.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;
use uuid::Uuid;

use super::conditions::{Facts, Subject};
use super::store as automation_store;
use super::{Automation, Happening};
use crate::actor::Actor;
use crate::attachments::links::Signer;
use crate::auth::Tenant;
use crate::custom_fields::model::Definition;
use crate::db::Tx;
use crate::error::StoreError;
use crate::model::Ticket;
use crate::time::Timestamp;

/// What every step of a pass shares.
pub struct Context<'a> {
    pub tenant: Tenant,
    pub now: Timestamp,
    pub signer: &'a Signer,
    /// The tenant's custom field definitions, to check values set.
    pub definitions: &'a [Definition],
    /// Reads a ticket's contact and organisation for the conditions on
    /// them.
    pub parties: &'a dyn PartiesOf,
    /// Closes a ticket's chat for `close_chat`.
    pub chats: &'a dyn ChatsOf,
}

/// A chat's side of the rules: a change of the chat area, which this one
/// cannot name (the service passes it in), in the rule's transaction, as
/// the rule (the transaction's actor), at `now`.
pub trait ChatsOf: Sync {
    /// Closes the session: the session as closed; None when it was closed
    /// already.
    fn close<'a>(
        &'a self,
        tx: &'a mut Tx,
        tenant: &'a Tenant,
        chat: Uuid,
        now: Timestamp,
    ) -> BoxFuture<'a, Result<Option<ChatSnapshot>, StoreError>>;

    /// What the conditions of a `chat.started` trigger read of the
    /// session; None when it is gone.
    fn facts<'a>(
        &'a self,
        tx: &'a mut Tx,
        tenant: &'a Tenant,
        chat: Uuid,
    ) -> BoxFuture<'a, Result<Option<ChatFacts>, StoreError>>;

    /// Adds and removes the session's tags: the session as changed; None
    /// when no tag changed.
    fn retag<'a>(
        &'a self,
        tx: &'a mut Tx,
        tenant: &'a Tenant,
        chat: Uuid,
        add: &'a [String],
        remove: &'a [String],
        now: Timestamp,
    ) -> BoxFuture<'a, Result<Option<ChatSnapshot>, StoreError>>;
}

/// A session as the chat area wrote it in a rule's transaction, opaque
/// here (this area cannot name the chat area's types): it travels to the
/// caller, which announces it once the transaction commits, without
/// reading again the row it wrote.
#[derive(Clone)]
pub struct ChatSnapshot(pub Arc<dyn Any + Send + Sync>);

impl fmt::Debug for ChatSnapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ChatSnapshot(..)")
    }
}

pub use super::conditions::ChatFacts;

/// A ticket's contact and the contact's organisation, as the API shows
/// them: a read of the contacts area, which this one cannot name (the
/// service passes it in), in the rule's transaction.
pub trait PartiesOf: Sync {
    fn parties<'a>(
        &'a self,
        tx: &'a mut Tx,
        tenant: &'a Tenant,
        contact: Uuid,
    ) -> BoxFuture<'a, Result<Parties, StoreError>>;
}

/// What [`PartiesOf`] reads: each as JSON, None when there is none.
#[derive(Debug, Clone, Default)]
pub struct Parties {
    pub contact: Option<Value>,
    pub organization: Option<Value>,
}

/// What one rule's actions did.
pub struct Outcome {
    /// The ticket after them.
    pub ticket: Ticket,
    /// The changes they made, as the triggers after them see them.
    pub happenings: Vec<Happening>,
    /// The chat it closed, if any.
    pub closed_chat: Option<ChangedChat>,
}

/// A chat a rule changed in the caller's transaction: once that commits,
/// the caller owes it what the same change through the API gets after its
/// commit (the sockets' `chat.session`; for a close also the queues and
/// the rating request), which this area cannot do.
#[derive(Debug, Clone)]
pub struct ChangedChat {
    pub chat: Uuid,
    /// The rule, as the change's actor.
    pub by: Actor,
    /// Whether the rule closed it (else it changed its tags).
    pub closed: bool,
    /// The session after the rule's change.
    pub snapshot: ChatSnapshot,
}

/// What rules did in a transaction of the caller's.
#[derive(Debug, Default)]
pub struct Fired {
    /// How many times a rule fired.
    pub count: usize,
    /// The chats they changed, for the caller's after-commit work.
    pub changed_chats: Vec<ChangedChat>,
}

impl Fired {
    /// Adds what `other` did.
    pub fn add(&mut self, other: Fired) {
        self.count += other.count;
        self.changed_chats.extend(other.changed_chats);
    }
}

/// Whether `rule`'s conditions hold for `ticket` (and `happening`).
pub async fn holds(
    tx: &mut Tx,
    ctx: &Context<'_>,
    rule: &Automation,
    ticket: &Ticket,
    happening: Option<&Happening>,
) -> Result<bool, StoreError> {
    holds_on(tx, ctx, rule, Subject::Ticket(ticket), happening).await
}

/// Whether `rule`'s conditions hold for `subject` (and `happening`).
pub(super) async fn holds_on(
    tx: &mut Tx,
    ctx: &Context<'_>,
    rule: &Automation,
    subject: Subject<'_>,
    happening: Option<&Happening>,
) -> Result<bool, StoreError> {
    let whole = ctx.tenant.whole();
    let (contact, ticket) = match subject {
        Subject::Ticket(ticket) => (ticket.contact_id, Some(ticket.id)),
        Subject::Chat(chat) => (chat.contact_id, None),
    };
    let last_customer_reply = match (rule.conditions.reads_customer_reply(), ticket) {
        (true, Some(ticket)) => automation_store::last_customer_reply(tx, &whole, ticket).await?,
        _ => None,
    };
    let parties = match (rule.conditions.reads_party(), contact) {
        (true, Some(contact)) => ctx.parties.parties(tx, &whole, contact).await?,
        _ => Parties::default(),
    };
    let mut open_calendars = Vec::new();
    for id in rule.conditions.calendars() {
        // A calendar deleted since the rule was written is never open.
        match crate::sla::store::find_calendar(&mut *tx, &whole, id).await {
            Ok(calendar) if calendar.hours().is_some_and(|h| h.is_open(ctx.now.0)) => {
                open_calendars.push(id)
            }
            Ok(_) | Err(StoreError::NotFound) => {}
            Err(err) => return Err(err),
        }
    }
    Ok(rule.conditions.hold(&Facts {
        subject,
        now: ctx.now,
        last_customer_reply,
        happening,
        contact: parties.contact.as_ref(),
        organization: parties.organization.as_ref(),
        open_calendars: &open_calendars,
    }))
}
