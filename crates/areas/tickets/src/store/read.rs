//! Reading one ticket: `find`, and `load`, which the writes use to answer
//! with what they wrote.

use uuid::Uuid;

use super::{TICKET_SELECT, TicketRow, by_id};
use crate::attachments::links::Signer;
use crate::attachments::store::{self as attachment_store, Owner};
use crate::auth::Tenant;
use crate::db::{Db, On};
use crate::error::StoreError;
use crate::model::Ticket;
use crate::sla::clocks::store as sla_store;

/// The ticket `id` of the tenant; another tenant's is NotFound.
/// Its attachments carry links from `signer`.
pub async fn find(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    signer: &Signer,
) -> Result<Ticket, StoreError> {
    load(db, tenant, id, signer).await
}

/// `find` on the pool or inside a transaction (to answer with what was
/// just written): the row (with its tags), then its attachments and SLA
/// clocks where the row says it has some.
pub async fn load<'c>(
    on: impl Into<On<'c>>,
    tenant: &Tenant,
    id: Uuid,
    signer: &Signer,
) -> Result<Ticket, StoreError> {
    let mut on = on.into();
    let row: TicketRow = by_id(TICKET_SELECT, tenant, id)
        .fetch_one(on.reborrow())
        .await?;
    let (policy_id, has_attachments, has_clocks, has_links) = (
        row.sla_policy_id,
        row.has_attachments,
        row.has_sla_clocks,
        row.has_links,
    );
    let mut ticket = row.into_ticket();
    if has_attachments {
        ticket.attachments = attachment_store::of(on.reborrow(), Owner::Ticket(id), signer).await?;
    }
    if has_links {
        ticket.links = super::link_rows::of(on.reborrow(), id).await?;
    }
    ticket.sla = match has_clocks {
        true => sla_store::of(on, id, policy_id).await?,
        false => sla_store::sla_of(policy_id, &[]),
    };
    Ok(ticket)
}

/// NotFound unless the ticket exists for the tenant.
pub(super) async fn ensure_ticket(db: &Db, tenant: &Tenant, id: Uuid) -> Result<(), StoreError> {
    let _: (Uuid,) = by_id("SELECT t.id FROM tickets t", tenant, id)
        .fetch_one(db)
        .await?;
    Ok(())
}

/// The tenant's ticket numbered `number` (`TKT-000042`), inside a
/// transaction (an incoming email's subject names it).
pub async fn find_by_number_in(
    tx: &mut crate::db::Tx,
    tenant: &Tenant,
    number: &str,
    signer: &Signer,
) -> Result<Option<Ticket>, StoreError> {
    let found: Option<(Uuid,)> =
        crate::db::Query::new("SELECT t.id FROM tickets t WHERE t.ticket_number = ")
            .push_bind(number)
            .push(" AND ")
            .push_tenant(tenant, "t")
            .fetch_optional(&mut *tx)
            .await?;
    match found {
        Some((id,)) => Ok(Some(load(&mut *tx, tenant, id, signer).await?)),
        None => Ok(None),
    }
}
