//! Which SLA policy applies to a ticket and the terms it gives, and the
//! policy the ticket holds.

use std::collections::HashMap;

use uuid::Uuid;

use super::TicketFactsRow;
use crate::apply::{TicketFacts, choose};
use crate::auth::Tenant;
use crate::calendar::Hours;
use crate::clocks::Terms;
use crate::custom_fields;
use crate::custom_fields::model::RecordKind;
use crate::custom_fields::store::{self as field_store, Recorded};
use crate::db::{Query, Tx};
use crate::error::StoreError;
use crate::model::Policy;
use crate::store::{find_calendar, list_policies};
use crate::tags::store::{self as tag_store, Tagged};
use vocab::ticket::Priority;

/// The policy that applies to the ticket now (whatever its targets).
pub(super) async fn chosen_policy(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
    facts: &TicketFactsRow,
) -> Result<Option<Policy>, StoreError> {
    let policies = list_policies(&mut *tx, tenant).await?;
    if !policies.iter().any(|p| p.enabled) {
        return Ok(None);
    }
    let tags = tag_store::of(&mut *tx, Tagged::Ticket, ticket_id).await?;
    let ticket = TicketFacts {
        priority: facts.priority,
        entity_id: facts.entity_id,
        team_id: facts.team_id,
        tags: &tags,
    };
    let mut field_checks = HashMap::new();
    for policy in policies
        .iter()
        .filter(|p| p.enabled && p.conditions.custom_fields.is_some())
    {
        let met = fields_met(tx, tenant, ticket_id, policy).await?;
        field_checks.insert(policy.id, met);
    }
    let chosen = choose(&policies, &ticket, |p| {
        field_checks.get(&p.id).copied().unwrap_or(false)
    });
    Ok(chosen.cloned())
}

/// Whether the ticket's custom field values meet the policy's condition;
/// a condition that no longer fits the definitions meets nothing.
pub(super) async fn fields_met(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
    policy: &Policy,
) -> Result<bool, StoreError> {
    let Some(condition) = &policy.conditions.custom_fields else {
        return Ok(true);
    };
    let definitions = custom_fields::store::list(&mut *tx, tenant).await?;
    let Ok(filter) = custom_fields::model::json_filter(
        "customFields",
        condition,
        &definitions,
        RecordKind::Ticket,
    ) else {
        return Ok(false);
    };
    let query = Query::new("SELECT COUNT(*) FROM tickets t WHERE t.id = ").push_bind(ticket_id);
    let count: i64 = field_store::push_filter(query, Recorded::Ticket, "t.id", &filter)
        .fetch_scalar(tx)
        .await?;
    Ok(count > 0)
}

/// The terms `policy` gives a ticket of `priority`; `None` when it sets no
/// targets for that priority.
pub(super) async fn terms(
    tx: &mut Tx,
    tenant: &Tenant,
    policy: &Policy,
    priority: Priority,
) -> Result<Option<Terms>, StoreError> {
    let Some(targets) = policy.targets.get(priority) else {
        return Ok(None);
    };
    let hours = match policy.business_hours_id {
        Some(id) => match find_calendar(&mut *tx, tenant, id).await?.hours() {
            Some(hours) => hours,
            None => return Ok(None),
        },
        None => Hours::Always,
    };
    Ok(Some(Terms::new(policy, hours, targets.clone())))
}

/// The terms of the policy the ticket holds (`None` without one, or once
/// it is deleted or disabled: its clocks then stand as they are).
pub(super) async fn held_terms(
    tx: &mut Tx,
    tenant: &Tenant,
    facts: &TicketFactsRow,
) -> Result<Option<Terms>, StoreError> {
    let Some(policy_id) = facts.sla_policy_id else {
        return Ok(None);
    };
    let policies = list_policies(&mut *tx, tenant).await?;
    match policies.iter().find(|p| p.id == policy_id) {
        Some(policy) => terms(tx, tenant, policy, facts.target_priority()).await,
        None => Ok(None),
    }
}

/// Records the ticket's policy and, when its clocks count against another
/// priority's targets than the ticket's own, that priority (`None`: its own).
pub(super) async fn hold_policy(
    tx: &mut Tx,
    ticket_id: Uuid,
    policy_id: Option<Uuid>,
    sla_priority: Option<Priority>,
) -> Result<(), StoreError> {
    Query::new("UPDATE tickets SET sla_policy_id = $2, sla_priority = $3 WHERE id = $1")
        .bind(ticket_id)
        .bind(policy_id)
        .bind(sla_priority)
        .execute(tx)
        .await
}

/// Whether the ticket may have SLA work: it holds a policy, or its company
/// has an enabled one. One read of two indexes, so that the writes of a
/// company without policies (most of them) skip the facts, tags and
/// policy list that choosing one reads.
pub(super) async fn may_apply(
    tx: &mut Tx,
    tenant: &Tenant,
    ticket_id: Uuid,
) -> Result<bool, StoreError> {
    let found: i64 = Query::new(
        "SELECT CASE WHEN EXISTS (SELECT 1 FROM tickets WHERE id = $1 \
         AND sla_policy_id IS NOT NULL) OR EXISTS (SELECT 1 FROM sla_policies \
         WHERE company_id = $2 AND mode = $3 AND enabled) THEN CAST(1 AS BIGINT) \
         ELSE CAST(0 AS BIGINT) END",
    )
    .bind(ticket_id)
    .bind_tenant(tenant)
    .fetch_scalar(tx)
    .await?;
    Ok(found == 1)
}
