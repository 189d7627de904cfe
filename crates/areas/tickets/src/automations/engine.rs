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

use serde_json::json;
use uuid::Uuid;

use super::store as automation_store;
use super::{Automation, Happening, Kind, TriggerEvent};
use crate::db::Tx;
use crate::error::StoreError;
use crate::model::ActivityKind;
use crate::store;

pub use super::apply::act;
pub use super::context::{
    ChangedChat, ChatFacts, ChatSnapshot, ChatsOf, Context, Fired, Outcome, Parties, PartiesOf,
    holds,
};
pub use super::happenings::{diff, recorded};

/// How many rounds of automations' changes a chain runs: a rule that
/// would fire past it writes an `automation_stopped` entry instead.
pub const MAX_DEPTH: usize = 5;

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
