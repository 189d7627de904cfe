//! Assigning a ticket by routing, in a team claim's transaction, and to
//! the agent who replies, in the comment's.

use std::collections::BTreeMap;

use serde_json::json;
use uuid::Uuid;

use super::activities::{NewActivity, add_activity};
use super::read::load;
use super::update::{lock, write_state};
use crate::attachments::links::Signer;
use crate::auth::Tenant;
use crate::db::Tx;
use crate::error::StoreError;
use crate::events;
use crate::model::{Ticket, TicketAssignment, TicketState, TicketUpdate};
use crate::tags::model::TagChange;
use crate::teams::model::Reason;
use crate::time::Timestamp;

/// Routing's assignment of ticket `id` to `agent`, in the claim's
/// transaction (which holds the team's and the members' locks): only if
/// the ticket is still in `team`, unassigned and open (OPEN or
/// IN_PROGRESS), so a person's assignment that came first is never
/// overwritten. Records the timeline entry and `ticket.updated` with
/// `assignment {reason: "routing", teamId}`; `None` when the ticket moved
/// on meanwhile. `now` (the node's clock) stamps the change.
pub async fn assign_by_routing(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    team: Uuid,
    agent: Uuid,
    signer: &Signer,
    now: Timestamp,
) -> Result<Option<Ticket>, StoreError> {
    // Routing is the service's work, whoever's request set it off.
    let tenant = &tenant.whole();
    let current = match lock(tx, tenant, id).await {
        Ok(current) => current,
        Err(StoreError::NotFound) => return Ok(None),
        Err(other) => return Err(other),
    };
    if current.assigned_to_id.is_some() || current.team_id != Some(team) || !current.is_open_work()
    {
        return Ok(None);
    }
    let assignment = TicketAssignment {
        reason: Reason::Routing,
        team_id: Some(team),
    };
    let ticket = assign(tx, tenant, id, &current, agent, assignment, signer, now).await?;
    Ok(Some(ticket))
}

/// An agent's public reply assigns ticket `id` to them if it has no
/// assignee (the company's `assignOnReply`), in the comment's transaction:
/// the timeline entry and `ticket.updated` with `assignment {reason:
/// "manual", teamId}` (the agent chose it by answering). Whether it did.
pub async fn assign_on_reply(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    agent: Uuid,
    signer: &Signer,
    now: Timestamp,
) -> Result<bool, StoreError> {
    let current = lock(tx, tenant, id).await?;
    if current.assigned_to_id.is_some() {
        return Ok(false);
    }
    let assignment = TicketAssignment {
        reason: Reason::Manual,
        team_id: current.team_id,
    };
    assign(tx, tenant, id, &current, agent, assignment, signer, now).await?;
    Ok(true)
}

/// Writes the assignment of locked ticket `id` (now `current`) to `agent`:
/// its state, a timeline entry per change and `ticket.updated` carrying
/// `assignment`; returns the ticket as it now reads.
#[allow(clippy::too_many_arguments)] // one step of two callers' transactions
async fn assign(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    current: &TicketState,
    agent: Uuid,
    assignment: TicketAssignment,
    signer: &Signer,
    now: Timestamp,
) -> Result<Ticket, StoreError> {
    let update = TicketUpdate {
        assigned_to_id: Some(Some(agent)),
        ..Default::default()
    };
    let changes = current.diff(&update);
    write_state(tx, tenant, id, &current.apply(&update, now), now).await?;
    for change in &changes {
        let (from, to) = change.texts();
        let entry = NewActivity {
            from,
            to,
            details: Some(json!({ "assignment": assignment })),
            ..NewActivity::new(change.activity_kind())
        };
        add_activity(tx, tenant, id, entry, now).await?;
    }
    let ticket = load(&mut *tx, tenant, id, signer).await?;
    let announced = events::Announced {
        changes: &changes,
        tags: &TagChange::default(),
        custom_fields: &BTreeMap::new(),
        assignment: Some(assignment),
        resolution: events::Resolution::default(),
    };
    events::updated(tx, tenant, &ticket, announced, now).await?;
    Ok(ticket)
}
