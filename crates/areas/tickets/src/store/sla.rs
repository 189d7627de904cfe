//! What a ticket's changes do to its SLA clocks, and the timeline entries
//! and `sla.*` events of their warnings, breaches and fulfilments.

use uuid::Uuid;

use super::activities::{NewActivity, add_activity};
use super::read::load;
use crate::attachments::links::Signer;
use crate::auth::Tenant;
use crate::db::Tx;
use crate::error::StoreError;
use crate::events;
use crate::model::{ActivityKind, Change, TicketState};
use crate::sla::clocks::store::{self as sla_store, Happening, Met};
use crate::time::Timestamp;

/// The SLA clocks after a real change: the policy chosen again (a changed
/// priority, tag or field may select another one or other targets), then
/// the status's effect.
pub(super) async fn move_sla_clocks(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    before: &TicketState,
    changes: &[Change],
    now: Timestamp,
) -> Result<Vec<Met>, StoreError> {
    sla_store::reevaluate(tx, tenant, id, before.priority, now).await?;
    if changes.iter().any(|c| matches!(c, Change::Status { .. })) {
        return sla_store::status_changed(tx, tenant, id, before.status, now).await;
    }
    Ok(Vec::new())
}

/// SLA warnings, breaches and fulfilments of a ticket: a timeline entry
/// each and its `sla.*` event with the ticket as it now is. The scheduler
/// records warnings and breaches through it, the ticket's own changes
/// their fulfilments; the events are stamped `now`, the caller's clock.
pub async fn record_sla(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    met: &[Met],
    signer: &Signer,
    now: Timestamp,
) -> Result<(), StoreError> {
    for happening in met {
        let kind = match happening.happening {
            Happening::Warning => ActivityKind::SlaWarning,
            Happening::Breached => ActivityKind::SlaBreached,
            Happening::Fulfilled => ActivityKind::SlaFulfilled,
        };
        let entry = NewActivity {
            to: Some(happening.metric.api_name().to_string()),
            details: Some(events::sla_json(happening)),
            ..NewActivity::new(kind)
        };
        add_activity(tx, tenant, id, entry, happening.at).await?;
    }
    let ticket = load(&mut *tx, tenant, id, signer).await?;
    // The team's channels hear of its tickets' SLA events too.
    let team_entities = match ticket.team_id {
        Some(team) => crate::teams::store::entities_of(&mut *tx, team).await?,
        None => Vec::new(),
    };
    for happening in met {
        events::sla(tx, tenant, &ticket, happening, &team_entities, now).await?;
    }
    Ok(())
}
