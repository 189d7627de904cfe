//! Case grouping: a message that would open a new ticket, from a contact
//! whose open ticket changed within the channel's window
//! (`caseGroupingHours`), still opens it (nothing is merged behind the
//! agents' backs) but with a suggestion to merge it into that case, shown
//! on both tickets as a link; accepting it is the ticket merge.

use std::time::Duration;

use crate::attachments::links::Signer;
use crate::auth::Tenant;
use crate::db::Tx;
use crate::email::model::Channel;
use crate::error::StoreError;
use crate::tickets::model::Ticket;
use crate::tickets::store::grouping;
use crate::time::Timestamp;

/// Suggests merging the new `ticket` into its contact's open case, if the
/// channel groups cases and the contact has one recent enough.
pub(super) async fn suggest_case(
    tx: &mut Tx,
    tenant: &Tenant,
    channel: &Channel,
    ticket: &Ticket,
    now: Timestamp,
    signer: &Signer,
) -> Result<(), StoreError> {
    let (hours, Some(contact)) = (channel.case_grouping_hours, ticket.contact_id) else {
        return Ok(());
    };
    if hours == 0 {
        return Ok(());
    }
    let since = now.minus(Duration::from_secs(u64::from(hours) * 3600));
    if let Some(case) = grouping::open_case_of(tx, tenant, contact, ticket.id, since).await? {
        grouping::suggest_merge(tx, tenant, ticket.id, case, now, signer).await?;
    }
    Ok(())
}
