//! SQL for splitting a ticket: a comment (and, optionally, those after it)
//! moves to a ticket made for it, linked to the old one, each with its
//! change-feed entry.

use serde_json::json;
use uuid::Uuid;

use super::activities::{NewActivity, add_activity};
use super::comments::record_moved;
use super::links;
use super::merge::refuse_if_merged;
use super::read::load;
use super::search::reindex_comments;
use super::update::lock;
use crate::attachments::links::Signer;
use crate::auth::Tenant;
use crate::db::{Db, Query};
use crate::error::StoreError;
use crate::event_log::record_change;
use crate::model::{ActivityKind, Ticket};
use crate::relation_events::{TicketSplit, announce};
use crate::relations::LinkKind;
use crate::time::Timestamp;

/// Checks that ticket `ticket` can be split at comment `comment`: a 400 on
/// `commentId` when the ticket has no such comment, 409 `ticket_merged`
/// when the ticket was merged.
pub async fn comment_to_split(
    db: &Db,
    tenant: &Tenant,
    ticket: Uuid,
    comment: Uuid,
) -> Result<(), StoreError> {
    let mut tx = db.begin().await?;
    lock(&mut tx, tenant, ticket).await?;
    refuse_if_merged(&mut tx, tenant, ticket).await?;
    let found: Option<(Uuid,)> = Query::new(
        "SELECT id FROM ticket_comments WHERE id = $1 AND ticket_id = $2 \
         AND company_id = $3 AND mode = $4",
    )
    .bind(comment)
    .bind(ticket)
    .bind_tenant(tenant)
    .fetch_optional(&mut tx)
    .await?;
    tx.commit().await?;
    found
        .map(|_| ())
        .ok_or_else(|| StoreError::InvalidReference {
            field: "commentId".to_string(),
            message: "must be a comment of the ticket".to_string(),
        })
}

/// Moves comment `comment` of ticket `from` (and, with `following`, every
/// comment after it) to `into`, a ticket just made for them: a
/// `split_from` link, a `split` timeline entry on each, `ticket.split`.
/// Answers the new ticket.
#[allow(clippy::too_many_arguments)]
pub async fn split(
    db: &Db,
    tenant: &Tenant,
    from: Uuid,
    into: Uuid,
    comment: Uuid,
    following: bool,
    now: Timestamp,
    signer: &Signer,
) -> Result<Ticket, StoreError> {
    let mut tx = db.begin().await?;
    lock(&mut tx, tenant, from).await?;
    refuse_if_merged(&mut tx, tenant, from).await?;
    let tenant = &tenant.whole();
    let (at, _): (Timestamp, Uuid) =
        Query::new("SELECT created_at, id FROM ticket_comments WHERE id = $1 AND ticket_id = $2")
            .bind(comment)
            .bind(from)
            .fetch_one(&mut tx)
            .await?;
    let moving: Vec<(Uuid,)> = match following {
        true => {
            Query::new(
                "SELECT id FROM ticket_comments WHERE ticket_id = $1 \
                 AND (created_at, id) >= ($2, $3) ORDER BY created_at, id",
            )
            .bind(from)
            .bind(at)
            .bind(comment)
            .fetch_all(&mut tx)
            .await?
        }
        false => vec![(comment,)],
    };
    let ids: Vec<Uuid> = moving.into_iter().map(|(id,)| id).collect();
    Query::new("UPDATE ticket_comments SET ticket_id = ")
        .push_bind(into)
        .push(" WHERE ticket_id = ")
        .push_bind(from)
        .push(" AND id IN ")
        .push_bind_list(ids.iter().copied())
        .execute(&mut tx)
        .await?;
    reindex_comments(&mut tx, from).await?;
    reindex_comments(&mut tx, into).await?;
    record_moved(&mut tx, tenant, &ids, now, signer).await?;
    links::insert(&mut tx, tenant, LinkKind::SplitFrom.stored(into, from), now).await?;
    for (ticket, details) in [
        (from, json!({"into": into, "commentIds": ids})),
        (into, json!({"from": from, "commentIds": ids})),
    ] {
        let entry = NewActivity {
            details: Some(details),
            ..NewActivity::new(ActivityKind::Split)
        };
        add_activity(&mut tx, tenant, ticket, entry, now).await?;
    }
    links::touch(&mut tx, tenant, from, now).await?;
    let old = load(&mut tx, tenant, from, signer).await?;
    let new = load(&mut tx, tenant, into, signer).await?;
    let data = TicketSplit {
        ticket: &new,
        split_from: &old,
        comment_ids: &ids,
    };
    announce(&mut tx, tenant, &new, &data, now).await?;
    record_change(&mut tx, tenant, &crate::events::ticket_change(&old)?, now).await?;
    tx.commit().await?;
    Ok(new)
}
