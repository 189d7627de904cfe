//! SQL for case grouping: a contact's open case, and the suggestion that a
//! new ticket of theirs be merged into it. The suggestion is a link of its
//! own kind (`suggested_merge_into` on the new ticket,
//! `suggested_merge_from` on the case), shown on both tickets like every
//! link; accepting it is the merge, which removes it, and removing the
//! link declines it.

use uuid::Uuid;

use super::links::{self, announce_link};
use crate::attachments::links::Signer;
use crate::auth::Tenant;
use crate::db::{Query, Tx};
use crate::error::StoreError;
use crate::relations::LinkKind;
use crate::time::Timestamp;

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
    let found: Option<(Uuid,)> = Query::new(
        "SELECT id FROM tickets WHERE company_id = $1 AND mode = $2 AND contact_id = $3 \
         AND id <> $4 AND status NOT IN ('RESOLVED', 'CLOSED') AND merged_into IS NULL \
         AND updated_at >= $5 ORDER BY updated_at DESC, id DESC LIMIT 1",
    )
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
