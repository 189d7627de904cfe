//! Editing a ticket's tags (adding and removing some), and the timeline
//! entry of a real tag change.

use std::collections::BTreeMap;

use serde_json::json;
use uuid::Uuid;

use super::activities::{NewActivity, add_activity};
use super::read::load;
use super::update::{lock, write_state};
use crate::attachments::links::Signer;
use crate::auth::Tenant;
use crate::db::{Db, Tx};
use crate::error::StoreError;
use crate::events;
use crate::model::{ActivityKind, Ticket};
use crate::sla::clocks::store as sla_store;
use crate::tags::model::{TagChange, TagEdit};
use crate::tags::store::{self as tag_store, Tagged};
use crate::time::Timestamp;

/// Adds and removes tags (`POST /tickets/{id}/tags`) under the ticket's
/// lock, so concurrent edits each keep theirs. A real change touches the
/// ticket, gets a `tags_changed` timeline entry and a `ticket.updated`
/// with `changes.tags`; one that changes nothing writes nothing.
pub async fn edit_tags(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    edit: TagEdit,
    now: Timestamp,
    signer: &Signer,
) -> Result<Ticket, StoreError> {
    edit_tags_at(db, tenant, id, edit, None, now, signer).await
}

/// [`edit_tags`] on the version `expected` (`If-Match`: a PATCH's or a
/// bulk change's `addTags`/`removeTags`); another one refuses the edit
/// (`StoreError::VersionConflict`) and changes nothing.
pub async fn edit_tags_at(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    edit: TagEdit,
    expected: Option<i64>,
    now: Timestamp,
    signer: &Signer,
) -> Result<Ticket, StoreError> {
    let mut tx = db.begin().await?;
    let current = lock(&mut tx, tenant, id).await?;
    super::update::check_version(&mut tx, tenant, id, expected).await?;
    let tags = tag_store::edit(&mut tx, tenant, Tagged::Ticket, id, &edit).await?;
    if !tags.is_empty() {
        write_state(&mut tx, tenant, id, &current, now).await?;
        sla_store::reevaluate(&mut tx, tenant, id, current.priority, now).await?;
        announce_tags(&mut tx, tenant, id, &tags, now).await?;
    }
    let ticket = load(&mut tx, tenant, id, signer).await?;
    if !tags.is_empty() {
        let fields = BTreeMap::new();
        let announced = events::Announced {
            changes: &[],
            tags: &tags,
            custom_fields: &fields,
            assignment: None,
            resolution: events::Resolution::default(),
        };
        events::updated(&mut tx, tenant, &ticket, announced, now).await?;
    }
    tx.commit().await?;
    Ok(ticket)
}

/// The `tags_changed` timeline entry of a real tag change.
pub(super) async fn announce_tags(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    tags: &TagChange,
    now: Timestamp,
) -> Result<(), StoreError> {
    if tags.is_empty() {
        return Ok(());
    }
    let entry = NewActivity {
        details: Some(json!(tags)),
        ..NewActivity::new(ActivityKind::TagsChanged)
    };
    add_activity(tx, tenant, id, entry, now).await
}
