//! A rating received or changed: the CSAT store writes it, and its
//! `csat.submitted` or `csat.updated` is the change feed's entry of the
//! rated chat or ticket, read here from the chat or tickets store
//! (`csat::store::RatedRecord`) in the rating's transaction, so the
//! automations' triggers on ratings read every rating and every change of
//! one once, as they read every other change.

use futures::future::BoxFuture;
use uuid::Uuid;

use crate::attachments::links::Signer;
use crate::auth::Tenant;
use crate::csat::RatingTarget;
use crate::csat::store::RatedRecord;
use crate::db::Tx;
use crate::error::StoreError;
use crate::events::RecordChange;

/// The rated record's entry, a ticket's with its links from `signer`.
pub struct Rated<'s> {
    pub signer: &'s Signer,
}

impl RatedRecord for Rated<'_> {
    fn change<'a>(
        &'a self,
        tx: &'a mut Tx,
        tenant: &'a Tenant,
        target: RatingTarget,
    ) -> BoxFuture<'a, Result<RecordChange, StoreError>> {
        Box::pin(async move {
            match target {
                RatingTarget::Chat(id) => crate::chat::store::session_change(tx, tenant, id).await,
                RatingTarget::Ticket(id) => ticket(tx, tenant, id, self.signer).await,
            }
        })
    }
}

async fn ticket(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    signer: &Signer,
) -> Result<RecordChange, StoreError> {
    let ticket = crate::tickets::store::load(&mut *tx, &tenant.whole(), id, signer).await?;
    crate::tickets::events::ticket_change(&ticket)
}
