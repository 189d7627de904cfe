//! SQL for links between tickets: each link one row (read from both of its
//! tickets by `link_rows`), made and removed with a timeline entry and a
//! `ticket.linked` on each side; and the children a parent waits for.

use serde_json::json;
use uuid::Uuid;

use super::activities::{NewActivity, add_activity};
use super::by_id;
use super::read::load;
use crate::attachments::links::Signer;
use crate::auth::Tenant;
use crate::db::{Db, Query, Tx};
use crate::error::StoreError;
use crate::model::{ActivityKind, Ticket};
use crate::relation_events::{TicketLinked, announce};
use crate::relations::{LinkKind, NewLinkKind, StoredLink, TicketLink};
use crate::time::Timestamp;

/// The kinds a client makes, as stored: at most one of them joins a pair.
const CLIENT_KINDS: &str = "('related', 'duplicate_of', 'parent_of')";

/// Writes the link row `link` (a merge's or a split's, or a client's).
pub(super) async fn insert(
    tx: &mut Tx,
    tenant: &Tenant,
    link: StoredLink,
    now: Timestamp,
) -> Result<(), StoreError> {
    Query::new(
        "INSERT INTO ticket_links (company_id, mode, from_id, to_id, kind, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind_tenant(tenant)
    .bind(link.from)
    .bind(link.to)
    .bind(link.kind)
    .bind(now)
    .execute(tx)
    .await
}

/// Removes the link row `link`; whether there was one.
pub(super) async fn delete(tx: &mut Tx, link: StoredLink) -> Result<bool, StoreError> {
    let gone: Option<(Uuid,)> = Query::new(
        "DELETE FROM ticket_links WHERE from_id = $1 AND to_id = $2 AND kind = $3 \
         RETURNING from_id",
    )
    .bind(link.from)
    .bind(link.to)
    .bind(link.kind)
    .fetch_optional(tx)
    .await?;
    Ok(gone.is_some())
}

/// What a client removes: its own links, and a merge suggestion (which
/// declines it).
const REMOVABLE_KINDS: &str = "('related', 'duplicate_of', 'parent_of', 'suggested_merge_into')";

/// The client's link between `a` and `b`, whichever way it was made.
async fn client_link(tx: &mut Tx, a: Uuid, b: Uuid) -> Result<Option<StoredLink>, StoreError> {
    link_of(tx, a, b, CLIENT_KINDS).await
}

/// The link of one of `kinds` between `a` and `b`, whichever way it was
/// made.
async fn link_of(
    tx: &mut Tx,
    a: Uuid,
    b: Uuid,
    kinds: &str,
) -> Result<Option<StoredLink>, StoreError> {
    let row: Option<(Uuid, Uuid, LinkKind)> = Query::new(format!(
        "SELECT from_id, to_id, kind FROM ticket_links WHERE ((from_id = $1 AND to_id = $2) \
         OR (from_id = $2 AND to_id = $1)) AND kind IN {kinds} ORDER BY kind LIMIT 1"
    ))
    .bind(a)
    .bind(b)
    .fetch_optional(tx)
    .await?;
    Ok(row.map(|(from, to, kind)| StoredLink { from, to, kind }))
}

/// NotFound unless `id` is a ticket the tenant sees; `field` names it in
/// the 400 when it is the other end of a request.
async fn ensure_seen(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    field: Option<&str>,
) -> Result<(), StoreError> {
    let found: Option<(Uuid,)> = by_id("SELECT t.id FROM tickets t", tenant, id)
        .fetch_optional(tx)
        .await?;
    match (found, field) {
        (Some(_), _) => Ok(()),
        (None, None) => Err(StoreError::NotFound),
        (None, Some(field)) => Err(StoreError::InvalidReference {
            field: field.to_string(),
            message: "must be a ticket of the company".to_string(),
        }),
    }
}

/// Links ticket `id` to `other` (a different ticket of the tenant) with
/// `kind` as `id` sees it: one row, a `linked` timeline entry and a
/// `ticket.linked` on each ticket. A pair joins by one such link: a second
/// is a 409. Answers the link as `id` sees it.
pub async fn add_link(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    other: Uuid,
    kind: NewLinkKind,
    now: Timestamp,
    signer: &Signer,
) -> Result<TicketLink, StoreError> {
    let mut tx = db.begin().await?;
    ensure_seen(&mut tx, tenant, id, None).await?;
    ensure_seen(&mut tx, tenant, other, Some("ticketId")).await?;
    if let Some(existing) = client_link(&mut tx, id, other).await? {
        return Err(StoreError::Refused(Box::new(
            crate::error::ApiError::conflict(format!(
                "The tickets are already linked ({})",
                existing.kind
            )),
        )));
    }
    let kind = LinkKind::from(kind);
    insert(&mut tx, tenant, kind.stored(id, other), now).await?;
    announce_link(&mut tx, tenant, id, other, kind, true, now, signer).await?;
    announce_link(
        &mut tx,
        tenant,
        other,
        id,
        kind.inverse(),
        true,
        now,
        signer,
    )
    .await?;
    let ticket = load(&mut tx, tenant, id, signer).await?;
    tx.commit().await?;
    ticket
        .links
        .into_iter()
        .find(|link| link.ticket_id == other)
        .ok_or(StoreError::NotFound)
}

/// Removes the client's link (or the merge suggestion, declining it)
/// between `id` and `other`, whichever way it was made (NotFound when
/// there is none), with a `unlinked` timeline entry
/// and a `ticket.linked` (`added: false`) on each ticket.
pub async fn remove_link(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    other: Uuid,
    now: Timestamp,
    signer: &Signer,
) -> Result<(), StoreError> {
    let mut tx = db.begin().await?;
    ensure_seen(&mut tx, tenant, id, None).await?;
    let link = link_of(&mut tx, id, other, REMOVABLE_KINDS)
        .await?
        .ok_or(StoreError::NotFound)?;
    delete(&mut tx, link).await?;
    let seen_from_id = match link.from == id {
        true => link.kind,
        false => link.kind.inverse(),
    };
    announce_link(&mut tx, tenant, id, other, seen_from_id, false, now, signer).await?;
    let far = seen_from_id.inverse();
    announce_link(&mut tx, tenant, other, id, far, false, now, signer).await?;
    tx.commit().await?;
    Ok(())
}

/// The timeline entry and `ticket.linked` of `ticket`'s link (made or,
/// without `added`, removed) to `other`, as `ticket` sees it; the ticket
/// is touched (`updatedAt`).
#[allow(clippy::too_many_arguments)]
pub(super) async fn announce_link(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket: Uuid,
    other: Uuid,
    kind: LinkKind,
    added: bool,
    now: Timestamp,
    signer: &Signer,
) -> Result<Ticket, StoreError> {
    touch(tx, tenant, ticket, now).await?;
    let entry = NewActivity {
        details: Some(json!({"ticketId": other, "kind": kind})),
        ..NewActivity::new(match added {
            true => ActivityKind::Linked,
            false => ActivityKind::Unlinked,
        })
    };
    add_activity(tx, tenant, ticket, entry, now).await?;
    let loaded = load(&mut *tx, &tenant.whole(), ticket, signer).await?;
    let number: (String,) = Query::new("SELECT ticket_number FROM tickets WHERE id = $1")
        .bind(other)
        .fetch_one(&mut *tx)
        .await?;
    let link = TicketLink {
        ticket_id: other,
        ticket_number: number.0,
        kind,
        created_at: now,
    };
    let data = TicketLinked {
        ticket: &loaded,
        link: &link,
        added,
    };
    announce(tx, tenant, &loaded, &data, now).await?;
    Ok(loaded)
}

/// Marks the ticket as changed at `now`.
pub(super) async fn touch(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    now: Timestamp,
) -> Result<(), StoreError> {
    Query::new("UPDATE tickets SET version = version + 1, updated_at = $4 WHERE id = $1 AND company_id = $2 AND mode = $3")
        .bind(id)
        .bind_tenant(tenant)
        .bind(now)
        .execute(tx)
        .await
}

/// The numbers of `parent`'s children still open (OPEN, IN_PROGRESS or
/// PENDING): a parent waits for them before it is resolved or closed.
pub async fn open_children(
    db: &Db,
    tenant: &Tenant,
    parent: Uuid,
) -> Result<Vec<String>, StoreError> {
    let rows: Vec<(String,)> = Query::new(
        "SELECT c.ticket_number FROM ticket_links l JOIN tickets c ON c.id = l.to_id \
         WHERE l.from_id = $1 AND l.kind = 'parent_of' AND c.company_id = $2 AND c.mode = $3 \
         AND c.status IN ('OPEN', 'IN_PROGRESS', 'PENDING') ORDER BY c.ticket_number",
    )
    .bind(parent)
    .bind_tenant(tenant)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|(number,)| number).collect())
}
