//! SQL for case grouping: a contact's open case, and the suggestion that a
//! new ticket of theirs be merged into it. The suggestion is a link of its
//! own kind (`suggested_merge_into` on the new ticket,
//! `suggested_merge_from` on the case), shown on both tickets like every
//! link; accepting it is the merge, which removes it, and removing the
//! link declines it. Undoing the merge brings back what it removed, where
//! both tickets are still open.

use std::collections::HashMap;

use serde::Deserialize;
use sqlx::types::Json;
use uuid::Uuid;

use super::links::{self, announce_link};
use crate::attachments::links::Signer;
use crate::auth::Tenant;
use crate::db::{Query, Tx};
use crate::error::StoreError;
use crate::model::ActivityKind;
use crate::relations::LinkKind;
use crate::time::Timestamp;

/// A ticket that is still a case: not RESOLVED, CLOSED or merged.
const OPEN: &str = "status NOT IN ('RESOLVED', 'CLOSED') AND merged_into IS NULL";

/// The contact's most recently changed ticket other than `except` that is
/// still open (not RESOLVED, CLOSED or merged) and changed at or after
/// `since`.
pub async fn open_case_of(
    tx: &mut Tx,
    tenant: &Tenant,
    contact_id: Uuid,
    except: Uuid,
    since: Timestamp,
) -> Result<Option<Uuid>, StoreError> {
    let found: Option<(Uuid,)> = Query::new(format!(
        "SELECT id FROM tickets WHERE company_id = $1 AND mode = $2 AND contact_id = $3 \
         AND id <> $4 AND {OPEN} AND updated_at >= $5 ORDER BY updated_at DESC, id DESC LIMIT 1"
    ))
    .bind_tenant(tenant)
    .bind(contact_id)
    .bind(except)
    .bind(since)
    .fetch_optional(tx)
    .await?;
    Ok(found.map(|(id,)| id))
}

/// Suggests merging `source` into `target`: the link, and its `linked`
/// timeline entry and `ticket.linked` on each ticket.
pub async fn suggest_merge(
    tx: &mut Tx,
    tenant: &Tenant,
    source: Uuid,
    target: Uuid,
    now: Timestamp,
    signer: &Signer,
) -> Result<(), StoreError> {
    let kind = LinkKind::SuggestedMergeInto;
    links::insert(tx, tenant, kind.stored(source, target), now).await?;
    announce_link(tx, tenant, source, target, kind, true, now, signer).await?;
    announce_link(
        tx,
        tenant,
        target,
        source,
        kind.inverse(),
        true,
        now,
        signer,
    )
    .await?;
    Ok(())
}

/// Removes every merge suggestion of the merged ticket `source`, either
/// way: it was accepted (the merge's own link replaces it), or the ticket
/// now lives on another and merges only from there.
pub(super) async fn drop_suggestions(tx: &mut Tx, source: Uuid) -> Result<(), StoreError> {
    Query::new(
        "DELETE FROM ticket_links WHERE kind = 'suggested_merge_into' \
         AND (from_id = $1 OR to_id = $1)",
    )
    .bind(source)
    .execute(tx)
    .await
}

/// What a `linked` or `unlinked` timeline entry names.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LinkEntry {
    ticket_id: Uuid,
    kind: LinkKind,
}

/// Brings back the merge suggestions of `source` that its merge removed,
/// now that the merge is undone: those whose last timeline entry on
/// `source` says they were made (a declined one's says it was removed;
/// the merge removes without an entry), that are not there again, and
/// whose two tickets are both still open. Each comes back as it was made
/// (the link, a `linked` entry and `ticket.linked` on both tickets).
pub(super) async fn restore_suggestions(
    tx: &mut Tx,
    tenant: &Tenant,
    source: Uuid,
    now: Timestamp,
    signer: &Signer,
) -> Result<(), StoreError> {
    // In the order of the ticket's versions: each link change is a change
    // of its own, whatever the clock says.
    let entries: Vec<(ActivityKind, Option<Json<serde_json::Value>>)> = Query::new(
        "SELECT kind, details FROM ticket_activities WHERE ticket_id = $1 AND kind IN ($2, $3) \
         ORDER BY version, created_at, id",
    )
    .bind(source)
    .bind(ActivityKind::Linked)
    .bind(ActivityKind::Unlinked)
    .fetch_all(&mut *tx)
    .await?;
    // The last word on each suggestion, by the other ticket.
    let mut last: HashMap<Uuid, Option<LinkKind>> = HashMap::new();
    for (kind, details) in entries {
        // Every link entry names its ticket and kind; one that does not
        // names no suggestion.
        let Some(entry) = details.and_then(|Json(d)| serde_json::from_value::<LinkEntry>(d).ok())
        else {
            continue;
        };
        if matches!(
            entry.kind,
            LinkKind::SuggestedMergeInto | LinkKind::SuggestedMergeFrom
        ) {
            let made = (kind == ActivityKind::Linked).then_some(entry.kind);
            last.insert(entry.ticket_id, made);
        }
    }
    let made: Vec<(Uuid, LinkKind)> = last
        .into_iter()
        .filter_map(|(other, kind)| Some((other, kind?)))
        .collect();
    if made.is_empty() {
        return Ok(());
    }
    let open: Vec<Uuid> = Query::new(format!(
        "SELECT id FROM tickets WHERE company_id = $1 AND mode = $2 AND {OPEN} AND id IN "
    ))
    .bind_tenant(tenant)
    .push_bind_list(made.iter().map(|(other, _)| *other).chain([source]))
    .fetch_column(&mut *tx)
    .await?;
    if !open.contains(&source) {
        return Ok(());
    }
    let present: Vec<(Uuid, Uuid)> = Query::new(
        "SELECT from_id, to_id FROM ticket_links WHERE kind = 'suggested_merge_into' \
         AND (from_id = $1 OR to_id = $1)",
    )
    .bind(source)
    .fetch_all(&mut *tx)
    .await?;
    let mut back: Vec<(Uuid, LinkKind)> = made
        .into_iter()
        .filter(|(other, _)| open.contains(other))
        .collect();
    // In a stable order, so their entries and events are too.
    back.sort_by_key(|(other, _)| *other);
    for (other, kind) in back {
        let link = kind.stored(source, other);
        if !present.contains(&(link.from, link.to)) {
            suggest_merge(tx, tenant, link.from, link.to, now, signer).await?;
        }
    }
    Ok(())
}
