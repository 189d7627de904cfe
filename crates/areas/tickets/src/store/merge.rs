//! SQL for merging a ticket into another: its comments, its own
//! attachments and its tags go to the target, it is closed with
//! `mergedInto` and a link both ways, and what moved is kept so that an
//! undo within the window puts both tickets back as they were (with the
//! merge suggestions it removed, where still open). Each
//! ticket's search document follows the comments it holds, and each
//! comment moved (either way) gets its change-feed entry.

use serde_json::json;
use sqlx::types::Json;
use uuid::Uuid;

use super::activities::{NewActivity, add_activity};
use super::comments::record_moved;
use super::links;
use super::read::load;
use super::search::reindex_comments;
use super::sla::{move_sla_clocks, record_sla};
use super::tags::announce_tags;
use super::update::{check_version, lock, write_state};
use crate::attachments::links::Signer;
use crate::auth::Tenant;
use crate::db::{Db, Query, Tx};
use crate::error::{ApiError, ErrorCode, StoreError};
use crate::event_log::record_change;
use crate::model::{ActivityKind, Change, Ticket, TicketState, TicketStatus, TicketUpdate};
use crate::relation_events::{TicketMerged, announce};
use crate::relations::LinkKind;
use crate::sla::clocks::store as sla_store;
use crate::tags::store::{self as tag_store, Tagged};
use crate::time::{Timestamp, new_id};

/// 409 `ticket_merged` when ticket `id` was merged into another.
pub(super) async fn refuse_if_merged(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
) -> Result<(), StoreError> {
    let row: Option<(Option<Uuid>,)> = Query::new(
        "SELECT merged_into FROM tickets WHERE id = $1 AND company_id = $2 AND mode = $3",
    )
    .bind(id)
    .bind_tenant(tenant)
    .fetch_optional(tx)
    .await?;
    match row {
        Some((Some(target),)) => Err(StoreError::Refused(Box::new(ApiError::ticket_merged(
            target,
        )))),
        _ => Ok(()),
    }
}

/// Locks `source` and `target` (in id order, so that two merges of the same
/// pair wait rather than deadlock); `target` missing is a 400 on `into`.
async fn lock_pair(
    tx: &mut Tx,
    tenant: &Tenant,
    source: Uuid,
    target: Uuid,
) -> Result<(TicketState, TicketState), StoreError> {
    let into = |err: StoreError| match err {
        StoreError::NotFound => StoreError::InvalidReference {
            field: "into".to_string(),
            message: "must be a ticket of the company".to_string(),
        },
        err => err,
    };
    if source < target {
        let source_state = lock(tx, tenant, source).await?;
        let target_state = lock(tx, tenant, target).await.map_err(into)?;
        Ok((source_state, target_state))
    } else {
        let target_state = lock(tx, tenant, target).await.map_err(into);
        let source_state = lock(tx, tenant, source).await?;
        Ok((source_state, target_state?))
    }
}

/// The status changes of `before` becoming `status`, written with their
/// SLA clocks and timeline entries; what the SLA clocks met.
async fn set_status(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    before: &TicketState,
    after: &TicketState,
    now: Timestamp,
) -> Result<Vec<crate::sla::clocks::store::Met>, StoreError> {
    let changes: Vec<Change> = before.diff(&TicketUpdate {
        status: Some(after.status),
        ..Default::default()
    });
    write_state(tx, tenant, id, after, now).await?;
    let met = move_sla_clocks(tx, tenant, id, before, &changes, now).await?;
    for change in &changes {
        let (from, to) = change.texts();
        let entry = NewActivity {
            from,
            to,
            ..NewActivity::new(change.activity_kind())
        };
        add_activity(tx, tenant, id, entry, now).await?;
    }
    Ok(met)
}

/// Merges ticket `source` into `target` (both the tenant's, not merged,
/// different): in one transaction its comments and own attachments move,
/// the target gains its tags, the source is CLOSED with `mergedInto` and a
/// `merged_into` link, each gets a `merged` timeline entry, and
/// `ticket.merged` is emitted. Answers the source as it now is.
/// `expected`: the source's version the caller saw (`If-Match`); another
/// one refuses the merge (`StoreError::VersionConflict`).
pub async fn merge(
    db: &Db,
    tenant: &Tenant,
    source: Uuid,
    target: Uuid,
    expected: Option<i64>,
    now: Timestamp,
    signer: &Signer,
) -> Result<Ticket, StoreError> {
    let mut tx = db.begin().await?;
    let (source_state, target_state) = lock_pair(&mut tx, tenant, source, target).await?;
    check_version(&mut tx, tenant, source, expected).await?;
    refuse_if_merged(&mut tx, tenant, source).await?;
    refuse_if_merged(&mut tx, tenant, target).await?;
    let tenant = &tenant.whole();
    let comments: Vec<(Uuid,)> =
        Query::new("SELECT id FROM ticket_comments WHERE ticket_id = $1 ORDER BY created_at, id")
            .bind(source)
            .fetch_all(&mut tx)
            .await?;
    Query::new("UPDATE ticket_comments SET ticket_id = $2 WHERE ticket_id = $1")
        .bind(source)
        .bind(target)
        .execute(&mut tx)
        .await?;
    reindex_comments(&mut tx, source).await?;
    reindex_comments(&mut tx, target).await?;
    let comment_ids: Vec<Uuid> = comments.into_iter().map(|(id,)| id).collect();
    record_moved(&mut tx, tenant, &comment_ids, now, signer).await?;
    let files: Vec<(Uuid,)> =
        Query::new("SELECT id FROM attachments WHERE ticket_id = $1 AND comment_id IS NULL")
            .bind(source)
            .fetch_all(&mut tx)
            .await?;
    Query::new("UPDATE attachments SET ticket_id = $2 WHERE ticket_id = $1 AND comment_id IS NULL")
        .bind(source)
        .bind(target)
        .execute(&mut tx)
        .await?;
    let mut tags = tag_store::of(&mut tx, Tagged::Ticket, target).await?;
    tags.extend(tag_store::of(&mut tx, Tagged::Ticket, source).await?);
    tags.sort();
    tags.dedup();
    let tag_change = tag_store::replace(&mut tx, tenant, Tagged::Ticket, target, &tags).await?;
    if !tag_change.is_empty() {
        sla_store::reevaluate(&mut tx, tenant, target, target_state.priority, now).await?;
        announce_tags(&mut tx, tenant, target, &tag_change, now).await?;
    }
    let closed = source_state.apply(
        &TicketUpdate {
            status: Some(TicketStatus::Closed),
            ..Default::default()
        },
        now,
    );
    let met = set_status(&mut tx, tenant, source, &source_state, &closed, now).await?;
    Query::new("UPDATE tickets SET version = version + 1, merged_into = $2, snoozed_until = NULL WHERE id = $1")
        .bind(source)
        .bind(target)
        .execute(&mut tx)
        .await?;
    links::insert(
        &mut tx,
        tenant,
        LinkKind::MergedInto.stored(source, target),
        now,
    )
    .await?;
    super::grouping::drop_suggestions(&mut tx, source).await?;
    let file_ids: Vec<Uuid> = files.into_iter().map(|(id,)| id).collect();
    for (ticket, details) in [
        (
            source,
            json!({"into": target, "comments": comment_ids.len()}),
        ),
        (
            target,
            json!({"from": source, "comments": comment_ids.len()}),
        ),
    ] {
        let entry = NewActivity {
            details: Some(details),
            ..NewActivity::new(ActivityKind::Merged)
        };
        add_activity(&mut tx, tenant, ticket, entry, now).await?;
    }
    links::touch(&mut tx, tenant, target, now).await?;
    Query::new(
        "INSERT INTO ticket_merges (id, company_id, mode, source_id, target_id, source_status, \
         source_resolved_at, comment_ids, attachment_ids, tags_added, merged_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(new_id())
    .bind_tenant(tenant)
    .bind(source)
    .bind(target)
    .bind(source_state.status)
    .bind(source_state.resolved_at)
    .bind(json!(comment_ids))
    .bind(json!(file_ids))
    .bind(json!(tag_change.added))
    .bind(now)
    .execute(&mut tx)
    .await?;
    let merged = announce_merge(&mut tx, tenant, source, target, false, now, signer).await?;
    if !met.is_empty() {
        record_sla(&mut tx, tenant, source, &met, signer, now).await?;
    }
    tx.commit().await?;
    Ok(merged)
}

/// Both tickets as they now are, `ticket.merged` about them (`undone` on
/// an undo) and the target's change feed entry; the source.
async fn announce_merge(
    tx: &mut Tx,
    tenant: &Tenant,
    source: Uuid,
    target: Uuid,
    undone: bool,
    now: Timestamp,
    signer: &Signer,
) -> Result<Ticket, StoreError> {
    let merged = load(&mut *tx, tenant, source, signer).await?;
    let into = load(&mut *tx, tenant, target, signer).await?;
    let data = TicketMerged {
        ticket: &merged,
        target: &into,
        undone,
    };
    announce(tx, tenant, &merged, &data, now).await?;
    record_change(tx, tenant, &crate::events::ticket_change(&into)?, now).await?;
    Ok(merged)
}

#[derive(sqlx::FromRow)]
struct MergeRow {
    id: Uuid,
    target_id: Uuid,
    source_status: TicketStatus,
    source_resolved_at: Option<Timestamp>,
    comment_ids: Json<Vec<Uuid>>,
    attachment_ids: Json<Vec<Uuid>>,
    tags_added: Json<Vec<String>>,
    merged_at: Timestamp,
}

fn refused(code: ErrorCode, message: String) -> StoreError {
    StoreError::Refused(Box::new(ApiError::new(
        axum::http::StatusCode::CONFLICT,
        code,
        message,
    )))
}

/// Undoes the last merge of `source`, if it was at most `window` ago: the
/// comments and attachments it moved go back, the tags it gave the target
/// are taken off again (those still there), the source gets its status
/// back and loses `mergedInto` and the link; each ticket gets a
/// `merge_undone` entry, the merge suggestions the merge removed come back
/// where both their tickets are still open (`grouping`), and
/// `ticket.merged` (`undone: true`) is emitted.
/// 409 `conflict` when the ticket is not merged, `undo_expired` after the
/// window.
pub async fn undo_merge(
    db: &Db,
    tenant: &Tenant,
    source: Uuid,
    window: chrono::TimeDelta,
    now: Timestamp,
    signer: &Signer,
) -> Result<Ticket, StoreError> {
    let mut tx = db.begin().await?;
    let source_state = lock(&mut tx, tenant, source).await?;
    let tenant = &tenant.whole();
    let row: Option<MergeRow> = Query::new(
        "SELECT id, target_id, source_status, source_resolved_at, comment_ids, attachment_ids, \
         tags_added, merged_at FROM ticket_merges WHERE source_id = $1 AND undone_at IS NULL \
         ORDER BY merged_at DESC LIMIT 1",
    )
    .bind(source)
    .fetch_optional(&mut tx)
    .await?;
    let Some(row) = row else {
        return Err(refused(
            ErrorCode::Conflict,
            "The ticket is not merged into another".to_string(),
        ));
    };
    if now.0 > row.merged_at.0 + window {
        return Err(refused(
            ErrorCode::UndoExpired,
            format!(
                "A merge can be undone for {} seconds after it; this one is older",
                window.num_seconds()
            ),
        ));
    }
    let target = row.target_id;
    let target_state = lock(&mut tx, tenant, target).await?;
    if !row.comment_ids.0.is_empty() {
        Query::new("UPDATE ticket_comments SET ticket_id = ")
            .push_bind(source)
            .push(" WHERE ticket_id = ")
            .push_bind(target)
            .push(" AND id IN ")
            .push_bind_list(row.comment_ids.0.iter().copied())
            .execute(&mut tx)
            .await?;
        reindex_comments(&mut tx, source).await?;
        reindex_comments(&mut tx, target).await?;
        record_moved(&mut tx, tenant, &row.comment_ids.0, now, signer).await?;
    }
    if !row.attachment_ids.0.is_empty() {
        Query::new("UPDATE attachments SET ticket_id = ")
            .push_bind(source)
            .push(" WHERE ticket_id = ")
            .push_bind(target)
            .push(" AND comment_id IS NULL AND id IN ")
            .push_bind_list(row.attachment_ids.0.iter().copied())
            .execute(&mut tx)
            .await?;
    }
    let mut tags = tag_store::of(&mut tx, Tagged::Ticket, target).await?;
    tags.retain(|tag| !row.tags_added.0.contains(tag));
    let tag_change = tag_store::replace(&mut tx, tenant, Tagged::Ticket, target, &tags).await?;
    if !tag_change.is_empty() {
        sla_store::reevaluate(&mut tx, tenant, target, target_state.priority, now).await?;
        announce_tags(&mut tx, tenant, target, &tag_change, now).await?;
    }
    let restored = TicketState {
        status: row.source_status,
        resolved_at: row.source_resolved_at,
        ..source_state.clone()
    };
    let met = set_status(&mut tx, tenant, source, &source_state, &restored, now).await?;
    Query::new("UPDATE tickets SET version = version + 1, merged_into = NULL WHERE id = $1")
        .bind(source)
        .execute(&mut tx)
        .await?;
    links::delete(&mut tx, LinkKind::MergedInto.stored(source, target)).await?;
    Query::new("UPDATE ticket_merges SET undone_at = $2 WHERE id = $1")
        .bind(row.id)
        .bind(now)
        .execute(&mut tx)
        .await?;
    for (ticket, details) in [
        (source, json!({"into": target})),
        (target, json!({"from": source})),
    ] {
        let entry = NewActivity {
            details: Some(details),
            ..NewActivity::new(ActivityKind::MergeUndone)
        };
        add_activity(&mut tx, tenant, ticket, entry, now).await?;
    }
    super::grouping::restore_suggestions(&mut tx, tenant, source, now, signer).await?;
    links::touch(&mut tx, tenant, target, now).await?;
    let merged = announce_merge(&mut tx, tenant, source, target, true, now, signer).await?;
    if !met.is_empty() {
        record_sla(&mut tx, tenant, source, &met, signer, now).await?;
    }
    tx.commit().await?;
    Ok(merged)
}
