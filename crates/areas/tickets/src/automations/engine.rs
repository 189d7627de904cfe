//! Running automations inside a transaction of the caller's: whether a
//! rule's conditions hold, what its actions do (`act`, through the same
//! steps as a PATCH, a note and a macro), and the chain of triggers that
//! one change sets off.
//!
//! A chain runs in the transaction of the change that started it (the
//! service's trigger pass begins one per feed entry): each rule sees the
//! ticket as the rules before it left it, a rule's own change never runs
//! it again, and the changes of rules run the triggers again, up to
//! [`MAX_DEPTH`]; past it, a timeline entry says the chain stopped.

use std::collections::VecDeque;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use uuid::Uuid;

use super::conditions::{Facts, Subject};
use super::store as automation_store;
use super::{Automation, Happening, Kind, TriggerEvent};
use crate::actor::Actor;
use crate::attachments::links::Signer;
use crate::auth::Tenant;
use crate::custom_fields::model::Definition;
use crate::db::Tx;
use crate::error::StoreError;
use crate::model::{ActivityKind, Ticket};
use crate::store;
use crate::time::Timestamp;

pub use super::apply::act;
pub use super::happenings::{diff, recorded};

/// How many rounds of automations' changes a chain runs: a rule that
/// would fire past it writes an `automation_stopped` entry instead.
pub const MAX_DEPTH: usize = 5;

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
    /// Closes the session; false when it was closed already.
    fn close<'a>(
        &'a self,
        tx: &'a mut Tx,
        tenant: &'a Tenant,
        chat: Uuid,
        now: Timestamp,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// What the conditions of a `chat.started` trigger read of the
    /// session; None when it is gone.
    fn facts<'a>(
        &'a self,
        tx: &'a mut Tx,
        tenant: &'a Tenant,
        chat: Uuid,
    ) -> BoxFuture<'a, Result<Option<ChatFacts>, StoreError>>;

    /// Adds and removes the session's tags; false when none changed.
    fn retag<'a>(
        &'a self,
        tx: &'a mut Tx,
        tenant: &'a Tenant,
        chat: Uuid,
        add: &'a [String],
        remove: &'a [String],
        now: Timestamp,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;
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

/// Runs the tenant's `rules` (triggers, in their order) on `first` and on
/// the changes they make in turn; what they did.
pub async fn run_triggers(
    tx: &mut Tx,
    ctx: &Context<'_>,
    rules: &[Automation],
    first: Happening,
    first_depth: usize,
) -> Result<Fired, StoreError> {
    let whole = ctx.tenant.whole();
    let mut queue = VecDeque::from([(first, first_depth)]);
    let mut fired = Fired::default();
    while let Some((happening, depth)) = queue.pop_front() {
        if happening.event == TriggerEvent::ChatStarted {
            // A chat that just started has no ticket yet: its triggers
            // read and change the chat.
            let (done, next) = super::chat::run(tx, ctx, rules, &happening, depth).await?;
            fired.add(done);
            queue.extend(next.into_iter().map(|h| (h, depth + 1)));
            continue;
        }
        if let (true, Some(chat)) = (happening.ticket_id.is_nil(), happening.chat_session_id) {
            // A chat's event runs on each ticket opened from the chat, in
            // their order, before what follows in the queue.
            let tickets = automation_store::tickets_of_chat(tx, &whole, chat).await?;
            for ticket in tickets.into_iter().rev() {
                let on_ticket = Happening {
                    ticket_id: ticket,
                    ..happening.clone()
                };
                queue.push_front((on_ticket, depth));
            }
            continue;
        }
        let mut ticket = match store::load(&mut *tx, &whole, happening.ticket_id, ctx.signer).await
        {
            Ok(ticket) if ticket.merged_into.is_none() => ticket,
            Ok(_) | Err(StoreError::NotFound) => continue,
            Err(err) => return Err(err),
        };
        for rule in rules {
            let runs = rule.enabled
                && rule.kind == Kind::Trigger
                && rule.events.contains(&happening.event)
                && happening.by_rule != Some(rule.id);
            if !runs || !holds(tx, ctx, rule, &ticket, Some(&happening)).await? {
                continue;
            }
            if depth >= MAX_DEPTH {
                stopped(tx, ctx, rule, ticket.id, depth).await?;
                continue;
            }
            let outcome = act(tx, ctx, rule, ticket.id, happening.event.as_str(), depth).await?;
            fired.count += 1;
            fired.changed_chats.extend(outcome.closed_chat);
            ticket = outcome.ticket;
            queue.extend(outcome.happenings.into_iter().map(|h| (h, depth + 1)));
        }
    }
    Ok(fired)
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

/// The chain's end, on the ticket's timeline: which rule did not fire and why.
async fn stopped(
    tx: &mut Tx,
    ctx: &Context<'_>,
    rule: &Automation,
    ticket: Uuid,
    depth: usize,
) -> Result<(), StoreError> {
    tx.act_as(rule.actor());
    let details = json!({
        "automation": {"id": rule.id, "name": rule.name},
        "depth": depth,
        "reason": format!("a chain of automations stops after {MAX_DEPTH} rounds of their own changes"),
    });
    store::add_entry(
        tx,
        &ctx.tenant.whole(),
        ticket,
        ActivityKind::AutomationStopped,
        details,
        ctx.now,
    )
    .await
}
