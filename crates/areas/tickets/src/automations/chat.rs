//! Triggers on a chat that just started (`chat.started`). Such a chat has
//! no ticket yet, so these triggers read and change the chat itself: their
//! conditions are on what a chat has (`entityId`, `teamId`,
//! `assignedToId`, `visitorEmail`, `tags`, `channel`, `actorType`,
//! `withinBusinessHours`, the chat's contact and organisation) and their
//! actions are what makes sense on a chat (`add_tags`, `remove_tags` on the
//! chat's tags, `close_chat`, `webhook`). A rule that names `chat.started`
//! names no other event, so every part of it applies to the chat; the
//! chat's changes go through the chat area's store (`ChatsOf`), in the
//! trigger pass's transaction, and its caller announces them after commit.

use uuid::Uuid;

use super::conditions::{Field, Operator, Subject};
use super::context::{ChangedChat, Context, Fired, holds_on};
use super::happenings::happening;
use super::{Action, Automation, AutomationFired, AutomationRef, Happening, Kind, TriggerEvent};
use crate::db::Tx;
use crate::error::{FieldError, StoreError};
use crate::event_log::emit;
use crate::validate::problem;

/// Whether a `chat.started` trigger may read `field`.
fn reads_chat(field: &Field) -> bool {
    matches!(
        field,
        Field::EntityId
            | Field::TeamId
            | Field::AssignedToId
            | Field::VisitorEmail
            | Field::Tags
            | Field::Channel
            | Field::ActorType
            | Field::WithinBusinessHours
            | Field::Party(..)
    )
}

/// Whether a `chat.started` trigger may take `action`.
fn acts_on_chat(action: &Action) -> bool {
    matches!(
        action,
        Action::AddTags(_) | Action::RemoveTags(_) | Action::CloseChat | Action::Webhook(_)
    )
}

/// The problems of a rule that names `chat.started` (none for another):
/// it names no other event, and its conditions and actions are a chat's.
pub fn check(rule: &super::NewAutomation) -> Result<(), Vec<FieldError>> {
    if rule.kind != Kind::Trigger || !rule.events.contains(&TriggerEvent::ChatStarted) {
        return Ok(());
    }
    let mut problems = Vec::new();
    if rule.events.len() > 1 {
        problems.push(problem(
            "events",
            "a chat.started trigger acts on the chat, so it names no other event",
        ));
    }
    let groups = [("all", &rule.conditions.all), ("any", &rule.conditions.any)];
    for (group, list) in groups {
        for (i, condition) in list.iter().enumerate() {
            let place = format!("conditions.{group}[{i}]");
            if !reads_chat(&condition.field) {
                problems.push(problem(
                    &format!("{place}.field"),
                    format!("a chat.started trigger reads no {}", condition.field.name()),
                ));
            } else if matches!(
                condition.operator,
                Operator::ChangedTo | Operator::ChangedFrom
            ) {
                problems.push(problem(
                    &format!("{place}.operator"),
                    "a chat that just started changed nothing",
                ));
            }
        }
    }
    for (i, action) in rule.actions.iter().enumerate() {
        if !acts_on_chat(action) {
            problems.push(problem(
                &format!("actions[{i}].type"),
                "a chat.started trigger takes add_tags, remove_tags, close_chat or webhook",
            ));
        }
    }
    match problems.is_empty() {
        true => Ok(()),
        false => Err(problems),
    }
}

/// Runs the `chat.started` triggers among `rules`, in their order, on the
/// chat of `started`: each reads the chat as the rules before it left it.
/// What they did, and the changes the triggers run on next (a close's
/// `chat.closed`, on the chat's tickets).
pub async fn run(
    tx: &mut Tx,
    ctx: &Context<'_>,
    rules: &[Automation],
    started: &Happening,
    depth: usize,
) -> Result<(Fired, Vec<Happening>), StoreError> {
    let whole = ctx.tenant.whole();
    let mut fired = Fired::default();
    let mut next = Vec::new();
    let Some(chat) = started.chat_session_id else {
        return Ok((fired, next));
    };
    for rule in rules {
        let runs = rule.enabled
            && rule.kind == Kind::Trigger
            && rule.events.contains(&TriggerEvent::ChatStarted)
            && started.by_rule != Some(rule.id);
        if !runs {
            continue;
        }
        // A chat deleted since it started has nothing left to act on.
        let Some(facts) = ctx.chats.facts(tx, &whole, chat).await? else {
            break;
        };
        if !holds_on(tx, ctx, rule, Subject::Chat(&facts), Some(started)).await? {
            continue;
        }
        tx.act_as(rule.actor());
        let (mut add, mut remove) = (Vec::new(), Vec::new());
        for action in &rule.actions {
            match action {
                Action::AddTags(tags) => add.extend(tags.iter().cloned()),
                Action::RemoveTags(tags) => remove.extend(tags.iter().cloned()),
                _ => {}
            }
        }
        let retagged = match add.is_empty() && remove.is_empty() {
            true => None,
            false => {
                let retag = ctx.chats.retag(tx, &whole, chat, &add, &remove, ctx.now);
                retag.await?
            }
        };
        let closed = match rule.actions.contains(&Action::CloseChat) {
            true => ctx.chats.close(tx, &whole, chat, ctx.now).await?,
            false => None,
        };
        let is_closed = closed.is_some();
        let data = AutomationFired {
            automation: AutomationRef {
                id: rule.id,
                name: &rule.name,
            },
            ticket_id: None,
            chat_session_id: Some(chat),
            cause: TriggerEvent::ChatStarted.as_str(),
            depth,
        };
        let event = emit(tx, &whole, &data, ctx.now).await?;
        super::apply::deliver(tx, &whole, rule, &event).await?;
        fired.count += 1;
        let actor = rule.actor();
        // A close came after the retag: its session is the later one.
        if let Some(snapshot) = closed.or(retagged) {
            fired.changed_chats.push(ChangedChat {
                chat,
                by: actor.clone(),
                closed: is_closed,
                snapshot,
            });
        }
        if is_closed {
            // The close runs the `chat.closed` triggers on the chat's
            // tickets, as any close does.
            next.push(Happening {
                ticket_id: Uuid::nil(),
                chat_session_id: Some(chat),
                ..happening(TriggerEvent::ChatClosed, Uuid::nil(), &actor)
            });
        }
    }
    Ok((fired, next))
}
