//! The audit entries of a channel's create, change and delete: what
//! changed, and whether a secret (the inbound secret, the SMTP password,
//! the DKIM key) was set, replaced or removed, never its value.

use uuid::Uuid;

use super::channels::ChannelFields;
use crate::audit::{Action, Changes, Target, TargetType};
use crate::auth::Tenant;
use crate::db::Tx;
use crate::error::StoreError;
use crate::model::Channel;
use crate::time::Timestamp;

/// Records the channel just created from `fields`.
pub(super) async fn created(
    tx: &mut Tx,
    tenant: &Tenant,
    channel: &Channel,
    fields: &ChannelFields,
    now: Timestamp,
) -> Result<(), StoreError> {
    let mut changes = Changes::created(channel);
    if secrets_of(fields) != [None, None, None] {
        changes = changes.secret("created");
    }
    let action = Action::EmailChannelCreated;
    audit(tx, tenant, channel.id, now, action, changes).await
}

/// Records a change of the channel from `was` to `is` (each the channel
/// as shown and its fields as stored), if it changed anything.
pub(super) async fn updated(
    tx: &mut Tx,
    tenant: &Tenant,
    was: (&Channel, &ChannelFields),
    is: (&Channel, &ChannelFields),
    now: Timestamp,
) -> Result<(), StoreError> {
    let mut changes = Changes::updated(was.0, is.0);
    match (secrets_of(was.1), secrets_of(is.1)) {
        (before, after) if before == after => {}
        (_, [None, None, None]) => changes = changes.secret("removed"),
        _ => changes = changes.secret("rotated"),
    }
    if changes.is_empty_update() {
        return Ok(());
    }
    let action = Action::EmailChannelUpdated;
    audit(tx, tenant, is.0.id, now, action, changes).await
}

/// Records the channel just deleted.
pub(super) async fn deleted(
    tx: &mut Tx,
    tenant: &Tenant,
    channel: &Channel,
    now: Timestamp,
) -> Result<(), StoreError> {
    let changes = Changes::deleted(channel);
    let action = Action::EmailChannelDeleted;
    audit(tx, tenant, channel.id, now, action, changes).await
}

/// A channel's secrets, to tell whether a change set, replaced or removed
/// one (the audit entry says so, never what they are).
fn secrets_of(fields: &ChannelFields) -> [Option<&str>; 3] {
    [
        fields.inbound_secret.as_deref(),
        fields.smtp_password.as_deref(),
        fields.dkim_key.as_deref(),
    ]
}

/// Writes the audit entry of `action` on channel `id` in `tx`.
async fn audit(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    now: Timestamp,
    action: Action,
    changes: Changes,
) -> Result<(), StoreError> {
    let target = Target::new(TargetType::EmailChannel, id);
    crate::audit::record(tx, tenant.company_id, now, action, target, changes).await
}
