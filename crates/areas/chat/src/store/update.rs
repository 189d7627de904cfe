//! Changing a chat session: a PATCH or a tag edit (or an automation's,
//! in its transaction), and the confirmation of the visitor's email.

use uuid::Uuid;

use super::{load_session, record_session};
use crate::actor::Actor;
use crate::auth::Tenant;
use crate::custom_fields::model::FieldPatch;
use crate::custom_fields::store::{self as field_store, Recorded};
use crate::db::{Backend, Db, Query, Tx};
use crate::error::StoreError;
use crate::model::{Session, SessionStatus, SessionTags};
use crate::tags::model::TagEdit;
use crate::tags::store::{self as tag_store, Tagged};
use crate::time::Timestamp;

/// A PATCH or a tag edit in one transaction, under the session's lock (so
/// concurrent tag edits each keep theirs): the status when it differs,
/// then the tags, then the custom field values. A tag edit leaving more than 50 tags is a 400 on `add`
/// and changes nothing. Returns the session and whether anything changed
/// (then `updated_at` is `now`, the node's clock). With `expected` (the
/// version `If-Match` named) on another version than the session's under
/// the lock, nothing changes: `VersionConflict`.
#[allow(clippy::too_many_arguments)] // the change's parts, and the version it is based on
pub async fn update_session(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    expected: Option<i64>,
    status: Option<SessionStatus>,
    tags: &SessionTags,
    custom_fields: &FieldPatch,
    now: Timestamp,
) -> Result<(Session, bool), StoreError> {
    let mut tx = db.begin().await?;
    let lock = row_lock(tx.backend());
    let current = load_session(&mut tx, tenant, id, lock).await?;
    if let Some(expected) = expected
        && expected != current.version
    {
        let current = current.version;
        return Err(StoreError::VersionConflict { current });
    }
    let mut changed = false;
    if let Some(status) = status
        && status != current.status
    {
        let closed_at = (status == SessionStatus::Closed).then_some(now);
        Query::new(
            "UPDATE chat_sessions SET status = $4, closed_at = $5 \
             WHERE id = $1 AND company_id = $2 AND mode = $3",
        )
        .bind(id)
        .bind_tenant(tenant)
        .bind(status)
        .bind(closed_at)
        .execute(&mut tx)
        .await?;
        changed = true;
    }
    let tag_change = match tags {
        SessionTags::Keep => Default::default(),
        SessionTags::Replace(wanted) => {
            tag_store::replace(&mut tx, tenant, Tagged::ChatSession, id, wanted).await?
        }
        SessionTags::Edit(edit) => {
            tag_store::edit(&mut tx, tenant, Tagged::ChatSession, id, edit).await?
        }
    };
    changed |= !tag_change.is_empty();
    let fields =
        field_store::apply(&mut tx, tenant, Recorded::ChatSession, id, custom_fields).await?;
    changed |= !fields.is_empty();
    if !changed {
        tx.commit().await?;
        return Ok((current, false));
    }
    mark_changed(&mut tx, tenant, id, now).await?;
    // A close is its own event (`chat.closed`), which the feed's entry is.
    let session = match status {
        Some(SessionStatus::Closed) if current.status != SessionStatus::Closed => {
            super::close::record_closed(&mut tx, tenant, id, now).await?
        }
        _ => record_session(&mut tx, tenant, id, now).await?,
    };
    tx.commit().await?;
    Ok((session, true))
}

/// Marks the email of the session holding confirmation `hash` as
/// confirmed and forgets the hash, so the link works once. None when no
/// session holds it (unknown, or already used). Stamped `now`.
pub async fn confirm_visitor_email(
    db: &Db,
    hash: &str,
    now: Timestamp,
) -> Result<Option<(Tenant, Session)>, StoreError> {
    let mut tx = db.begin().await?;
    let row: Option<(Uuid, Uuid, crate::auth::Mode, String)> = Query::new(
        "UPDATE chat_sessions SET email_verified = $2, email_confirmation_hash = NULL, \
         updated_at = $3, version = version + 1 WHERE email_confirmation_hash = $1 \
         RETURNING id, company_id, mode, visitor_name",
    )
    .bind(hash)
    .bind(true)
    .bind(now)
    .fetch_optional(&mut tx)
    .await?;
    let Some((id, company_id, mode, visitor_name)) = row else {
        return Ok(None);
    };
    // The visitor who followed their link confirmed it.
    tx.act_as(Actor::visitor(id, &visitor_name));
    let tenant = Tenant::new(company_id, mode);
    let session = record_session(&mut tx, &tenant, id, now).await?;
    tx.commit().await?;
    Ok(Some((tenant, session)))
}

/// Adds and removes tags of session `id` in `tx` as the transaction's
/// actor, at `now`, for a change that starts elsewhere (an automation's
/// `add_tags`, `remove_tags`): the session's version and its feed entry
/// when a tag changed. The session after it, None when nothing changed.
/// Its caller, once it commits, pushes the change to the sockets.
pub async fn retag_in(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    edit: &TagEdit,
    now: Timestamp,
) -> Result<Option<Session>, StoreError> {
    let lock = row_lock(tx.backend());
    load_session(&mut *tx, tenant, id, lock).await?;
    let change = tag_store::edit(tx, tenant, Tagged::ChatSession, id, edit).await?;
    if change.is_empty() {
        return Ok(None);
    }
    mark_changed(tx, tenant, id, now).await?;
    record_session(tx, tenant, id, now).await.map(Some)
}

/// The lock a change takes on the session's row as it reads it: Postgres
/// locks the row; SQLite's write transaction already holds the database.
fn row_lock(backend: Backend) -> &'static str {
    match backend {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    }
}

/// A changed session's `updated_at` (`now`) and its next version, which
/// `If-Match` and the ETag read.
async fn mark_changed(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    now: Timestamp,
) -> Result<(), StoreError> {
    Query::new(
        "UPDATE chat_sessions SET updated_at = $4, version = version + 1 \
         WHERE id = $1 AND company_id = $2 AND mode = $3",
    )
    .bind(id)
    .bind_tenant(tenant)
    .bind(now)
    .execute(tx)
    .await
}
