//! Messages no ticket is opened from: recorded as dropped, so a re-fetch
//! is dropped again; a bounce also marks the addresses it reports as
//! undeliverable, with `email.bounced` for each.

use crate::auth::Tenant;
use crate::db::Tx;
use crate::email::loops::Machine;
use crate::email::model::{Channel, Direction, EmailBounced};
use crate::email::parse::Parsed;
use crate::email::store::messages::{self, NewMessage};
use crate::error::StoreError;
use crate::events;
use crate::time::Timestamp;

use super::Outcome;

/// Records a dropped message (`reason`), so that it stays dropped.
pub(super) async fn drop_message(
    tx: &mut Tx,
    tenant: &Tenant,
    channel: &Channel,
    parsed: &Parsed,
    message_id: &str,
    reason: &'static str,
    now: Timestamp,
) -> Result<Outcome, StoreError> {
    let record = NewMessage {
        message_id,
        channel_id: Some(channel.id),
        ticket_id: None,
        comment_id: None,
        direction: Direction::Ignored,
        sender: parsed.from.as_deref(),
        envelope: None,
        html: None,
        excerpt: None,
    };
    messages::record(tx, tenant, &record, now).await?;
    tracing::info!(channel = %channel.id, %message_id, reason, "incoming email dropped");
    Ok(Outcome::Dropped { reason })
}

/// A machine's message: dropped; a bounce also marks the addresses it
/// reports undeliverable, with `email.bounced` for each.
pub(super) async fn dropped_machine(
    tx: &mut Tx,
    tenant: &Tenant,
    channel: &Channel,
    parsed: &Parsed,
    message_id: &str,
    machine: Machine,
    now: Timestamp,
) -> Result<Outcome, StoreError> {
    if let Machine::Bounce(addresses) = &machine {
        for address in addresses {
            messages::mark_undeliverable(tx, tenant, address, "bounce", now).await?;
            let bounced = EmailBounced {
                channel_id: channel.id,
                address,
                contact_id: None,
                message_id,
            };
            events::emit(tx, tenant, &bounced, now).await?;
        }
    }
    drop_message(
        tx,
        tenant,
        channel,
        parsed,
        message_id,
        machine.reason(),
        now,
    )
    .await
}
