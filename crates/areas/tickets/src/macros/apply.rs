//! Applying a macro to a ticket: one transaction through the steps a PATCH
//! and a reply take (`store::update_in`, `store::add_comment_in`), so the
//! macro's changes record the same timeline entries and events as those
//! requests would, then `macro.applied`. A preview runs the same steps and
//! rolls them back: it answers exactly what applying would, and writes
//! nothing.

use serde::Serialize;
use uuid::Uuid;

use super::{Macro, render};
use crate::attachments::links::Signer;
use crate::auth::Tenant;
use crate::custom_fields::model::FieldPatch;
use crate::db::{Db, Tx};
use crate::delivery::Delivery;
use crate::error::StoreError;
use crate::event_log::{EventName, EventPayload};
use crate::model::{AuthorType, Comment, NewComment, Ticket, TicketUpdate};
use crate::store;
use crate::tags::model::{TAGS_PER_RECORD, too_many};
use crate::time::Timestamp;

/// Who applies the macro and what they were shown.
#[derive(Debug, Clone)]
pub struct Application {
    /// The comment author of its reply and note (the agent applying it,
    /// or none for a company key).
    pub author_id: Option<Uuid>,
    /// `{{agent.name}}`: the agent's (or key's) name.
    pub agent_name: String,
    /// The macro's custom field values, checked against the company's
    /// definitions as they are now.
    pub custom_fields: FieldPatch,
    /// The version the caller saw (`If-Match`), if it named one.
    pub expected: Option<i64>,
    /// How its public reply is delivered (held for the undo window, as
    /// every agent's public reply).
    pub reply_delivery: Delivery,
}

/// What a macro did (or would do) to a ticket.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Applied {
    /// The ticket after the macro.
    pub ticket: Ticket,
    /// The public reply it added, placeholders filled in.
    pub reply: Option<Comment>,
    /// The internal note it added, placeholders filled in.
    pub note: Option<Comment>,
}

/// `macro.applied`: the ticket after the macro, the macro, and the reply
/// and note it added.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct MacroApplied<'a> {
    #[serde(flatten)]
    ticket: &'a Ticket,
    #[serde(rename = "macro")]
    applied: MacroRef<'a>,
    reply_id: Option<Uuid>,
    note_id: Option<Uuid>,
}

#[derive(Debug, Serialize)]
struct MacroRef<'a> {
    id: Uuid,
    name: &'a str,
}

impl EventPayload for MacroApplied<'_> {
    const NAME: EventName = EventName::MacroApplied;
}

/// Applies `applied` to the ticket `id` and commits.
pub async fn apply(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    applied: &Macro,
    who: Application,
    now: Timestamp,
    signer: &Signer,
) -> Result<Applied, StoreError> {
    let mut tx = db.begin().await?;
    let result = run(&mut tx, tenant, id, applied, who, now, signer).await?;
    tx.commit().await?;
    Ok(result)
}

/// What applying `applied` to the ticket `id` would answer; rolled back,
/// so nothing is written, announced or sent.
pub async fn preview(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    applied: &Macro,
    who: Application,
    now: Timestamp,
    signer: &Signer,
) -> Result<Applied, StoreError> {
    let mut tx = db.begin().await?;
    let result = run(&mut tx, tenant, id, applied, who, now, signer).await;
    drop(tx);
    result
}

pub(crate) async fn run(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    applied: &Macro,
    who: Application,
    now: Timestamp,
    signer: &Signer,
) -> Result<Applied, StoreError> {
    store::lock(tx, tenant, id).await?;
    store::check_version(tx, tenant, id, who.expected).await?;
    let before = store::load(&mut *tx, tenant, id, signer).await?;
    let actions = &applied.actions;
    let tags = edited_tags(&before.tags, &actions.add_tags, &actions.remove_tags)?;
    let update = TicketUpdate {
        status: actions.status,
        priority: actions.priority,
        assigned_to_id: actions.assigned_to_id.as_update(),
        team_id: actions.team_id.as_update(),
        tags,
        custom_fields: who.custom_fields.clone(),
    };
    let mut ticket = store::update_in(tx, tenant, id, update, None, None, now, signer).await?;
    // The ticket may have moved to a team the caller does not see: the
    // macro's replies still belong to it.
    let whole = &tenant.whole();
    let comment = |body: &Option<String>, is_internal: bool| {
        body.as_ref().map(|text| NewComment {
            body: render(text, &ticket, &who.agent_name),
            author_id: who.author_id,
            author_type: AuthorType::Agent,
            is_internal,
            attachment_ids: Vec::new(),
            assign_on_reply: None,
            delivery: match is_internal {
                true => Delivery::Now,
                false => who.reply_delivery,
            },
        })
    };
    let (reply, note) = (comment(&actions.reply, false), comment(&actions.note, true));
    let reply = match reply {
        Some(new) => Some(store::add_comment_in(tx, whole, id, new, None, now, signer).await?),
        None => None,
    };
    let note = match note {
        Some(new) => Some(store::add_comment_in(tx, whole, id, new, None, now, signer).await?),
        None => None,
    };
    if let Some((_, after)) = note.as_ref().or(reply.as_ref()) {
        ticket = after.clone();
    }
    let (reply, note) = (reply.map(|(c, _)| c), note.map(|(c, _)| c));
    let data = MacroApplied {
        ticket: &ticket,
        applied: MacroRef {
            id: applied.id,
            name: &applied.name,
        },
        reply_id: reply.as_ref().map(|c| c.id),
        note_id: note.as_ref().map(|c| c.id),
    };
    // Recorded and staged for the ticket's channels, as the other ticket
    // events are.
    crate::relation_events::announce(tx, whole, &ticket, &data, now).await?;
    Ok(Applied {
        ticket,
        reply,
        note,
    })
}

/// The ticket's tags after adding `add` and removing `remove` (None when
/// that changes nothing); more than a record carries is refused.
fn edited_tags(
    current: &[String],
    add: &[String],
    remove: &[String],
) -> Result<Option<Vec<String>>, StoreError> {
    let mut wanted: std::collections::BTreeSet<String> = current.iter().cloned().collect();
    wanted.extend(add.iter().cloned());
    for tag in remove {
        wanted.remove(tag);
    }
    let wanted: Vec<String> = wanted.into_iter().collect();
    if wanted.len() > TAGS_PER_RECORD {
        let problem = too_many("actions.addTags");
        return Err(StoreError::InvalidReference {
            field: problem.field,
            message: problem.message,
        });
    }
    Ok((wanted != current).then_some(wanted))
}
