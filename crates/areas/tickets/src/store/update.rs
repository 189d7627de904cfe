//! Updating a ticket (a PATCH), and the ticket's lock and state write that
//! every change of a ticket goes through.

use std::collections::BTreeMap;

use serde_json::json;
use uuid::Uuid;

use super::activities::{NewActivity, add_activity};
use super::by_id;
use super::read::load;
use super::sla::{move_sla_clocks, record_sla};
use super::tags::announce_tags;
use crate::attachments::links::Signer;
use crate::auth::Tenant;
use crate::custom_fields::model::FieldChange;
use crate::custom_fields::store::{self as field_store, Recorded};
use crate::db::{Backend, Db, Query, Table, Tx, ensure_reference};
use crate::error::StoreError;
use crate::events;
use crate::model::{ActivityKind, Ticket, TicketAssignment, TicketState, TicketUpdate};
use crate::tags::model::TagChange;
use crate::tags::store::{self as tag_store, Tagged};
use crate::teams::model::Reason;
use crate::teams::store as team_store;
use crate::time::Timestamp;

/// The changeable fields of a ticket, locked until the transaction ends
/// (SQLite's write transaction already excludes other writers).
pub(crate) async fn lock(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
) -> Result<TicketState, StoreError> {
    let lock = match tx.backend() {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    by_id(
        "SELECT t.status, t.priority, t.assigned_to_id, t.team_id, t.resolved_at FROM tickets t",
        tenant,
        id,
    )
    .push(lock)
    .fetch_one(tx)
    .await
}

pub(super) async fn write_state(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    state: &TicketState,
    now: Timestamp,
) -> Result<(), StoreError> {
    Query::new(
        "UPDATE tickets SET status = $4, priority = $5, assigned_to_id = $6, team_id = $7, \
         resolved_at = $8, updated_at = $9, version = version + 1 \
         WHERE id = $1 AND company_id = $2 AND mode = $3",
    )
    .bind(id)
    .bind_tenant(tenant)
    .bind(state.status.as_str())
    .bind(state.priority.as_str())
    .bind(state.assigned_to_id)
    .bind(state.team_id)
    .bind(state.resolved_at)
    .bind(now)
    .execute(tx)
    .await
}

/// Applies a PATCH. Only fields whose value differs count: they get a
/// timeline entry each and one `ticket.updated` with `changes` (plus
/// `ticket.resolved` and the visitor's email when it became RESOLVED); a
/// PATCH that changes nothing writes nothing and emits nothing.
pub async fn update(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    update: TicketUpdate,
    now: Timestamp,
    signer: &Signer,
) -> Result<Ticket, StoreError> {
    update_with_rating_link(db, tenant, id, update, None, None, now, signer).await
}

/// `update`; when the ticket becomes RESOLVED and its entity asks for
/// ratings automatically, the visitor's resolution email carries
/// `rating_link` (signed by the caller, which holds the signing key).
/// `expected`: the version the caller saw (`If-Match`); another one
/// refuses the change (`StoreError::VersionConflict`).
#[allow(clippy::too_many_arguments)] // the PATCH's whole request
pub async fn update_with_rating_link(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    update: TicketUpdate,
    rating_link: Option<&str>,
    expected: Option<i64>,
    now: Timestamp,
    signer: &Signer,
) -> Result<Ticket, StoreError> {
    let mut tx = db.begin().await?;
    let ticket = update_in(
        &mut tx,
        tenant,
        id,
        update,
        rating_link,
        expected,
        now,
        signer,
    )
    .await?;
    tx.commit().await?;
    Ok(ticket)
}

/// The PATCH's step inside a transaction of the caller's (a macro's
/// application runs it beside its replies).
#[allow(clippy::too_many_arguments)] // the PATCH's whole request
pub async fn update_in(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    update: TicketUpdate,
    rating_link: Option<&str>,
    expected: Option<i64>,
    now: Timestamp,
    signer: &Signer,
) -> Result<Ticket, StoreError> {
    if let Some(Some(user)) = update.assigned_to_id {
        ensure_reference(
            &mut *tx,
            tenant.company_id,
            Table::Users,
            user,
            "assignedToId",
        )
        .await?;
    }
    if let Some(Some(team)) = update.team_id {
        team_store::ensure_team(&mut *tx, tenant, team, "teamId").await?;
    }
    let current = lock(tx, tenant, id).await?;
    check_version(tx, tenant, id, expected).await?;
    // The caller saw the ticket; what follows is the change's own work, and
    // the answer shows the ticket even when it moved to a team the caller
    // does not see.
    let tenant = &tenant.whole();
    let changes = current.diff(&update);
    let tags = match &update.tags {
        Some(wanted) => tag_store::replace(tx, tenant, Tagged::Ticket, id, wanted).await?,
        None => TagChange::default(),
    };
    let fields =
        field_store::apply(tx, tenant, Recorded::Ticket, id, &update.custom_fields).await?;
    if changes.is_empty() && tags.is_empty() && fields.is_empty() {
        return load(&mut *tx, tenant, id, signer).await;
    }
    let after = current.apply(&update, now);
    write_state(tx, tenant, id, &after, now).await?;
    let met = move_sla_clocks(tx, tenant, id, &current, &changes, now).await?;
    for change in &changes {
        let (from, to) = change.texts();
        let entry = NewActivity {
            from,
            to,
            ..NewActivity::new(change.activity_kind())
        };
        add_activity(tx, tenant, id, entry, now).await?;
    }
    announce_tags(tx, tenant, id, &tags, now).await?;
    announce_fields(tx, tenant, id, &fields, now).await?;
    let ticket = load(&mut *tx, tenant, id, signer).await?;
    let assignment = (after.assigned_to_id != current.assigned_to_id).then_some(TicketAssignment {
        reason: Reason::Manual,
        team_id: after.team_id,
    });
    let announced = events::Announced {
        changes: &changes,
        tags: &tags,
        custom_fields: &fields,
        assignment,
        resolution: events::Resolution { rating_link },
    };
    events::updated(tx, tenant, &ticket, announced, now).await?;
    if !met.is_empty() {
        record_sla(tx, tenant, id, &met, signer, now).await?;
    }
    Ok(ticket)
}

/// Refuses the change when the caller named a version (`If-Match`) the
/// ticket, locked by this transaction, is no longer at.
pub(crate) async fn check_version(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    expected: Option<i64>,
) -> Result<(), StoreError> {
    let Some(expected) = expected else {
        return Ok(());
    };
    let current: i64 = by_id("SELECT t.version FROM tickets t", tenant, id)
        .fetch_scalar(tx)
        .await?;
    match current == expected {
        true => Ok(()),
        false => Err(StoreError::VersionConflict { current }),
    }
}

/// The `custom_fields_changed` timeline entry of a real change of values:
/// `details` is `{key: {from, to}}`.
async fn announce_fields(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    fields: &BTreeMap<String, FieldChange>,
    now: Timestamp,
) -> Result<(), StoreError> {
    if fields.is_empty() {
        return Ok(());
    }
    let entry = NewActivity {
        details: Some(json!(fields)),
        ..NewActivity::new(ActivityKind::CustomFieldsChanged)
    };
    add_activity(tx, tenant, id, entry, now).await
}
