//! What a rule's actions do to a ticket, through the same steps as a
//! PATCH, a note and a macro (`store::update_in`, `store::add_comment_in`,
//! `macros::apply`), in the caller's transaction and as the rule; a
//! chat's close through the service's `ChatsOf`.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::Value;
use uuid::Uuid;

use super::context::{ChangedChat, Context, Outcome};
use super::happenings::{diff, happening};
use super::{Action, Automation, AutomationFired, AutomationRef, Happening, TriggerEvent};
use crate::auth::Tenant;
use crate::custom_fields::model::{FieldPatch, RecordKind, check_values};
use crate::db::Tx;
use crate::error::StoreError;
use crate::event_log::{Event, emit};
use crate::mail::{self, Email};
use crate::model::{AuthorType, NewComment, TicketUpdate};
use crate::store;
use crate::webhooks::store as webhook_store;

/// Applies `rule`'s actions to ticket `id` as the rule (its actor), then
/// records `automation.fired`; `cause` names what ran it.
pub async fn act(
    tx: &mut Tx,
    ctx: &Context<'_>,
    rule: &Automation,
    id: Uuid,
    cause: &str,
    depth: usize,
) -> Result<Outcome, StoreError> {
    let whole = &ctx.tenant.whole();
    tx.act_as(rule.actor());
    store::lock(tx, whole, id).await?;
    let before = store::load(&mut *tx, whole, id, ctx.signer).await?;
    let mut update = TicketUpdate::default();
    let mut tags: BTreeSet<String> = before.tags.iter().cloned().collect();
    let mut fields = serde_json::Map::new();
    for action in &rule.actions {
        match action {
            Action::SetStatus(status) => update.status = Some(*status),
            Action::SetPriority(priority) => update.priority = Some(*priority),
            Action::SetAssignee(user) => update.assigned_to_id = Some(*user),
            Action::SetTeam(team) => update.team_id = Some(*team),
            Action::AddTags(list) => tags.extend(list.iter().cloned()),
            Action::RemoveTags(list) => list.iter().for_each(|tag| {
                tags.remove(tag);
            }),
            Action::SetCustomField(set) => {
                fields.insert(set.key.clone(), set.value.clone());
            }
            Action::ApplyMacro(_)
            | Action::AddNote(_)
            | Action::Email(_)
            | Action::Webhook(_)
            | Action::Snooze(_)
            | Action::CloseChat => {}
        }
    }
    let tags: Vec<String> = tags.into_iter().collect();
    if tags != before.tags {
        update.tags = Some(tags);
    }
    if !fields.is_empty() {
        update.custom_fields = checked_fields(ctx, &Value::Object(fields))?;
    }
    let mut ticket =
        store::update_in(tx, whole, id, update, None, None, ctx.now, ctx.signer).await?;
    let mut comments = Vec::new();
    let mut closed_chat = None;
    for action in &rule.actions {
        match action {
            Action::ApplyMacro(macro_id) => {
                let found = crate::macros::store::find_shared_in(tx, whole, *macro_id).await?;
                let custom_fields = match found.actions.custom_fields.is_empty() {
                    true => FieldPatch::default(),
                    false => {
                        checked_fields(ctx, &serde_json::to_value(&found.actions.custom_fields)?)?
                    }
                };
                let who = crate::macros::apply::Application {
                    author_id: None,
                    agent_name: rule.name.clone(),
                    custom_fields,
                    expected: None,
                    // No one stands behind a rule's reply to undo it.
                    reply_delivery: crate::delivery::Delivery::Now,
                };
                let applied =
                    crate::macros::apply::run(tx, whole, id, &found, who, ctx.now, ctx.signer)
                        .await?;
                comments.extend(applied.reply.map(|_| false));
                comments.extend(applied.note.map(|_| true));
                ticket = applied.ticket;
            }
            Action::AddNote(text) => {
                let new = NewComment {
                    body: crate::macros::render(text, &ticket, &rule.name),
                    author_id: None,
                    author_type: AuthorType::Agent,
                    is_internal: true,
                    attachment_ids: Vec::new(),
                    assign_on_reply: None,
                    delivery: crate::delivery::Delivery::Now,
                };
                let (_, after) =
                    store::add_comment_in(tx, whole, id, new, None, ctx.now, ctx.signer).await?;
                comments.push(true);
                ticket = after;
            }
            Action::Email(email) => {
                let to = match email.to.as_str() {
                    "requester" => ticket.visitor_email.clone(),
                    address => Some(address.to_string()),
                };
                if let Some(to) = to {
                    let render = |text: &str| crate::macros::render(text, &ticket, &rule.name);
                    let email = Email {
                        to,
                        subject: render(&email.subject),
                        text: render(&email.body),
                        html: None,
                    };
                    mail::queue(tx, whole, &email).await?;
                }
            }
            Action::Snooze(snooze) => {
                let minutes = u64::try_from(snooze.minutes).unwrap_or(0);
                let until = ctx.now.plus(Duration::from_secs(minutes * 60));
                ticket = store::snooze_in(tx, whole, id, Some(until), ctx.now, ctx.signer).await?;
            }
            Action::CloseChat => {
                if let Some(chat) = ticket.chat_session_id
                    && let Some(snapshot) = ctx.chats.close(tx, whole, chat, ctx.now).await?
                {
                    closed_chat = Some((chat, snapshot));
                }
            }
            _ => {}
        }
    }
    let fired = AutomationFired {
        automation: AutomationRef {
            id: rule.id,
            name: &rule.name,
        },
        ticket_id: Some(id),
        chat_session_id: None,
        cause,
        depth,
    };
    let event = emit(tx, whole, &fired, ctx.now).await?;
    deliver(tx, whole, rule, &event).await?;
    let actor = rule.actor();
    let mut happenings: Vec<Happening> = diff(&before, &ticket, &actor).into_iter().collect();
    happenings.extend(comments.into_iter().map(|internal| Happening {
        comment: Some((AuthorType::Agent, internal)),
        ..happening(TriggerEvent::CommentCreated, id, &actor)
    }));
    // The close runs the triggers on every ticket of the chat.
    happenings.extend(closed_chat.as_ref().map(|(chat, _)| Happening {
        ticket_id: Uuid::nil(),
        chat_session_id: Some(*chat),
        ..happening(TriggerEvent::ChatClosed, id, &actor)
    }));
    Ok(Outcome {
        ticket,
        happenings,
        closed_chat: closed_chat.map(|(chat, snapshot)| ChangedChat {
            chat,
            by: actor,
            closed: true,
            snapshot,
        }),
    })
}

/// Delivers `event` (the rule's `automation.fired`) to each active
/// webhook the rule's `webhook` actions name, unless it subscribes to the
/// event (then `emit` queued its delivery already). A webhook deleted or
/// turned off since the rule was written is passed over.
pub(super) async fn deliver(
    tx: &mut Tx,
    tenant: &Tenant,
    rule: &Automation,
    event: &Event,
) -> Result<(), StoreError> {
    let mut hooks: Vec<Uuid> = Vec::new();
    for action in &rule.actions {
        let Action::Webhook(id) = action else {
            continue;
        };
        match webhook_store::find(&mut *tx, tenant, *id).await {
            Ok(hook)
                if hook.is_active
                    && !hooks.contains(id)
                    && !hook.events.0.iter().any(|e| e == event.name.as_str()) =>
            {
                hooks.push(*id)
            }
            Ok(_) | Err(StoreError::NotFound) => {}
            Err(err) => return Err(err),
        }
    }
    crate::webhooks::dispatch::queue(tx, tenant, &hooks, event).await
}

fn checked_fields(ctx: &Context<'_>, given: &Value) -> Result<FieldPatch, StoreError> {
    check_values(
        ctx.definitions,
        RecordKind::Ticket,
        Some(given),
        false,
        false,
    )
    .map_err(StoreError::InvalidReferences)
}
