//! Escalating a ticket, by the API or by an escalation rule.

use uuid::Uuid;

use super::activities::{NewActivity, add_activity};
use super::read::load;
use super::sla::{move_sla_clocks, record_sla};
use super::update::{lock, write_state};
use crate::attachments::links::Signer;
use crate::auth::Tenant;
use crate::db::{Db, Table, Tx, ensure_reference};
use crate::error::StoreError;
use crate::events;
use crate::model::{ActivityKind, Escalation, Priority, Ticket, TicketStatus, TicketUpdate};
use crate::time::Timestamp;

/// Escalates a ticket: IN_PROGRESS, URGENT, assigned to `to_user` (which
/// must be a user of the company: 400 on `escalateToId` otherwise), with an
/// `escalated` timeline entry and `ticket.escalated`. The API calls it with
/// `automatic: false`; escalation rules with `automatic: true` and their id.
pub async fn escalate(
    db: &Db,
    tenant: &Tenant,
    ticket_id: Uuid,
    escalation: Escalation,
    now: Timestamp,
    signer: &Signer,
) -> Result<Ticket, StoreError> {
    let mut tx = db.begin().await?;
    if let Some(to_user) = escalation.to_user {
        ensure_reference(
            &mut tx,
            tenant.company_id,
            Table::Users,
            to_user,
            "escalateToId",
        )
        .await?;
    }
    let ticket = escalate_in(&mut tx, tenant, ticket_id, &escalation, now, signer).await?;
    tx.commit().await?;
    Ok(ticket)
}

/// `escalate` inside the caller's transaction (a rule scheduler records
/// that its rule fired in the same one). The caller has checked that
/// `escalation.to_user` is a user of the tenant's company and `to_team`
/// one of its teams. An escalation to a team alone leaves the ticket
/// unassigned in that team, for its routing.
pub async fn escalate_in(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
    escalation: &Escalation,
    now: Timestamp,
    signer: &Signer,
) -> Result<Ticket, StoreError> {
    let current = lock(tx, tenant, ticket_id).await?;
    // Seen by the caller: the rest (the answer too) is the whole tenant's,
    // as an escalation may move the ticket to a team the caller does not see.
    let tenant = &tenant.whole();
    let update = TicketUpdate {
        status: Some(TicketStatus::InProgress),
        priority: Some(Priority::Urgent),
        assigned_to_id: Some(escalation.to_user),
        team_id: escalation.to_team.map(Some),
        tags: None,
        custom_fields: Default::default(),
    };
    write_state(tx, tenant, ticket_id, &current.apply(&update, now), now).await?;
    let changes = current.diff(&update);
    let met = move_sla_clocks(tx, tenant, ticket_id, &current, &changes, now).await?;
    let summary = events::escalation_summary(escalation, current.assigned_to_id);
    let mut details = serde_json::json!(summary);
    details["changes"] = events::changes_json(&changes);
    let entry = NewActivity {
        details: Some(details),
        ..NewActivity::new(ActivityKind::Escalated)
    };
    add_activity(tx, tenant, ticket_id, entry, now).await?;
    let ticket = load(&mut *tx, tenant, ticket_id, signer).await?;
    events::escalated(tx, tenant, &ticket, &summary, now).await?;
    if !met.is_empty() {
        record_sla(tx, tenant, ticket_id, &met, signer, now).await?;
    }
    Ok(ticket)
}
