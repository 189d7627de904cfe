//! Running automations inside a transaction of the caller's: whether a
//! rule's conditions hold, what its actions do (through the same steps as
//! a PATCH, a note and a macro: `store::update_in`, `store::add_comment_in`,
//! `macros::apply`), and the chain of triggers that one change sets off.
//!
//! A chain runs in the transaction of the change that started it (the
//! service's trigger pass begins one per feed entry): each rule sees the
//! ticket as the rules before it left it, a rule's own change never runs
//! it again, and the changes of rules run the triggers again, up to
//! [`MAX_DEPTH`]; past it, a timeline entry says the chain stopped.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::{Value, json};
use uuid::Uuid;

use super::conditions::Facts;
use super::store as automation_store;
use super::{Action, Automation, AutomationFired, AutomationRef, Happening, Kind, TriggerEvent};
use crate::actor::Actor;
use crate::attachments::links::Signer;
use crate::auth::Tenant;
use crate::custom_fields::model::{Definition, FieldPatch, RecordKind, check_values};
use crate::db::Tx;
use crate::error::StoreError;
use crate::event_log::emit;
use crate::mail::{self, Email};
use crate::model::{ActivityKind, AuthorType, NewComment, Ticket, TicketUpdate};
use crate::store;
use crate::time::Timestamp;

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
}

/// What one rule's actions did.
pub struct Outcome {
    /// The ticket after them.
    pub ticket: Ticket,
    /// The changes they made, as the triggers after them see them.
    pub happenings: Vec<Happening>,
}

/// Runs the tenant's `rules` (triggers, in their order) on `first` and on
/// the changes they make in turn; how many times a rule fired.
pub async fn run_triggers(
    tx: &mut Tx,
    ctx: &Context<'_>,
    rules: &[Automation],
    first: Happening,
    first_depth: usize,
) -> Result<usize, StoreError> {
    let whole = ctx.tenant.whole();
    let mut queue = VecDeque::from([(first, first_depth)]);
    let mut fired = 0;
    while let Some((happening, depth)) = queue.pop_front() {
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
            fired += 1;
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
    let last_customer_reply = match rule.conditions.reads_customer_reply() {
        true => automation_store::last_customer_reply(tx, &ctx.tenant.whole(), ticket.id).await?,
        false => None,
    };
    Ok(rule.conditions.hold(&Facts {
        ticket,
        now: ctx.now,
        last_customer_reply,
        happening,
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
            Action::ApplyMacro(_) | Action::AddNote(_) | Action::Email(_) => {}
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
            _ => {}
        }
    }
    let fired = AutomationFired {
        automation: AutomationRef {
            id: rule.id,
            name: &rule.name,
        },
        ticket_id: id,
        cause,
        depth,
    };
    emit(tx, whole, &fired, ctx.now).await?;
    let actor = rule.actor();
    let mut happenings: Vec<Happening> = diff(&before, &ticket, &actor).into_iter().collect();
    happenings.extend(comments.into_iter().map(|internal| Happening {
        comment: Some((AuthorType::Agent, internal)),
        ..happening(TriggerEvent::CommentCreated, id, &actor)
    }));
    Ok(Outcome { ticket, happenings })
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

/// A happening of `event` on ticket `id` made by `actor` (an automation's
/// when it names one).
fn happening(event: TriggerEvent, id: Uuid, actor: &Actor) -> Happening {
    Happening {
        event,
        ticket_id: id,
        actor: Some(actor.clone()),
        changes: BTreeMap::new(),
        tags_added: Vec::new(),
        tags_removed: Vec::new(),
        comment: None,
        by_rule: actor
            .id
            .filter(|_| actor.kind == crate::actor::ActorType::Automation),
    }
}

/// The `ticket.updated` of what changed from `before` to `after`, if
/// anything did.
pub fn diff(before: &Ticket, after: &Ticket, actor: &Actor) -> Option<Happening> {
    let mut changes = BTreeMap::new();
    let mut put = |name: String, from: Value, to: Value| {
        if from != to {
            changes.insert(name, (from, to));
        }
    };
    put("status".into(), json!(before.status), json!(after.status));
    put(
        "priority".into(),
        json!(before.priority),
        json!(after.priority),
    );
    put(
        "assignedToId".into(),
        json!(before.assigned_to_id),
        json!(after.assigned_to_id),
    );
    put("teamId".into(), json!(before.team_id), json!(after.team_id));
    let keys: BTreeSet<&String> = before
        .custom_fields
        .keys()
        .chain(after.custom_fields.keys())
        .collect();
    for key in keys {
        let value = |t: &Ticket| t.custom_fields.get(key).cloned().unwrap_or(Value::Null);
        put(format!("customFields.{key}"), value(before), value(after));
    }
    let tags_added: Vec<String> = after
        .tags
        .iter()
        .filter(|t| !before.tags.contains(t))
        .cloned()
        .collect();
    let tags_removed: Vec<String> = before
        .tags
        .iter()
        .filter(|t| !after.tags.contains(t))
        .cloned()
        .collect();
    if changes.is_empty() && tags_added.is_empty() && tags_removed.is_empty() {
        return None;
    }
    Some(Happening {
        changes,
        tags_added,
        tags_removed,
        ..happening(TriggerEvent::TicketUpdated, after.id, actor)
    })
}

/// The happening of a recorded ticket event (`name` with its `data`, as
/// the event log keeps it), made by `actor`; None for other events.
pub fn recorded(name: &str, data: &Value, actor: Option<Actor>) -> Option<Happening> {
    let event: TriggerEvent = name.parse().ok()?;
    let id_at = |key: &str| data.get(key)?.as_str()?.parse::<Uuid>().ok();
    let mut happening = Happening {
        event,
        ticket_id: Uuid::nil(),
        by_rule: None,
        actor,
        changes: BTreeMap::new(),
        tags_added: Vec::new(),
        tags_removed: Vec::new(),
        comment: None,
    };
    match event {
        TriggerEvent::TicketCreated => happening.ticket_id = id_at("id")?,
        TriggerEvent::TicketUpdated => {
            happening.ticket_id = id_at("id")?;
            let changes = data.get("changes").and_then(Value::as_object);
            for (key, change) in changes.into_iter().flatten() {
                let texts = |v: Option<&Value>| -> Vec<String> {
                    v.and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(|t| t.as_str().map(String::from))
                                .collect()
                        })
                        .unwrap_or_default()
                };
                let from_to = |c: &Value| {
                    let side = |k: &str| c.get(k).cloned().unwrap_or(Value::Null);
                    (side("from"), side("to"))
                };
                match key.as_str() {
                    "tags" => {
                        happening.tags_added = texts(change.get("added"));
                        happening.tags_removed = texts(change.get("removed"));
                    }
                    "customFields" => {
                        for (field, c) in change.as_object().into_iter().flatten() {
                            happening
                                .changes
                                .insert(format!("customFields.{field}"), from_to(c));
                        }
                    }
                    _ => {
                        happening.changes.insert(key.clone(), from_to(change));
                    }
                }
            }
        }
        TriggerEvent::CommentCreated => {
            happening.ticket_id = id_at("ticketId")?;
            let author = data
                .get("authorType")?
                .as_str()?
                .parse::<AuthorType>()
                .ok()?;
            let internal = data
                .get("isInternal")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            happening.comment = Some((author, internal));
        }
    }
    Some(happening)
}
