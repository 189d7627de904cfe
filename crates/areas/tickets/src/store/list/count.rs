//! How many tickets a list's filter matches: exact from the counters
//! `ticket_counts` keeps where they follow every filter given, counted up to
//! a cap otherwise; and where a page's total comes from.

use uuid::Uuid;

use super::{filtered, matching};
use crate::auth::Tenant;
use crate::db::{Db, Query};
use crate::error::StoreError;
use crate::model::TicketFilter;
use crate::paging::{Total, capped_count};

/// The number of the tenant's tickets matching `filter`. Without tag
/// filters, exact from `ticket_counts` (kept by triggers in every ticket
/// write's transaction; its migration says why): a sum over the few rows of
/// the tenant's (entity, status, priority, assignee, team) combinations,
/// whatever the number of tickets. On Postgres a combination is split over
/// up to 16 stripes that only mean something summed (one may be negative):
/// the sum adds them all. With a search, or a number, tag, custom field
/// or SLA filter, which no counter follows, the matching tickets are counted
/// up to `cap`, and beyond it the total is `cap` and a lower bound.
pub async fn count(
    db: &Db,
    tenant: &Tenant,
    filter: &TicketFilter,
    cap: i64,
) -> Result<Total, StoreError> {
    if filter.search.is_some() {
        let (matches, _) = matching(db.backend(), " FROM tickets t", tenant, filter);
        return capped_count(db, matches.prefixed("SELECT 1"), cap).await;
    }
    match exact_count(tenant, filter) {
        Some(query) => Ok(Total::exact(query.fetch_scalar(db).await?)),
        None => {
            let (matches, _) = filtered(db.backend(), "SELECT 1 FROM tickets t", tenant, filter);
            capped_count(db, matches, cap).await
        }
    }
}

/// Where a list page's total comes from.
pub(super) enum PageTotal {
    /// Counted before the page (a search's count, which no counter holds).
    Counted(Total),
    /// This exact count, a column of the page's own statement.
    WithRows(Query),
}

/// The count a page carries in its own statement: the exact one, for a
/// list without a search. Not with `assigned`: its count binds the
/// counters' "no assignee" value, which the page's own text has no
/// placeholder for, so it is read in a statement of its own.
pub(super) fn page_total(tenant: &Tenant, filter: &TicketFilter) -> Option<Query> {
    match (&filter.search, filter.assigned) {
        (None, None) => exact_count(tenant, filter),
        _ => None,
    }
}

/// The exact count of `filter`'s tickets from `ticket_counts`, when no
/// filter beyond the counters' columns is given (search aside: `count`
/// handles it first). Its placeholders follow `filtered`'s order: the
/// tenant, then entity, status, priority, assignee and team (then, with
/// `assigned`, the nil UUID, which `filtered` has no counterpart for).
fn exact_count(tenant: &Tenant, filter: &TicketFilter) -> Option<Query> {
    let sla_filtered = filter.sla_breached.is_some() || filter.sla_due_before.is_some();
    let unfollowed = filter.number.is_some() || sla_filtered || filter.snoozed.is_some();
    if !filter.tags.is_empty() || !filter.custom_fields.is_empty() || unfollowed {
        return None;
    }
    let mut query = Query::new(
        "SELECT CAST(COALESCE(SUM(c.tickets), 0) AS BIGINT) FROM ticket_counts c WHERE ",
    )
    .push_tenant_in_teams(tenant, "c", "team");
    if let Some(entity) = filter.entity_id {
        query = query.push(" AND c.entity_id = ").push_bind(entity);
    }
    if let Some(status) = filter.status {
        query = query.push(" AND c.status = ").push_bind(status);
    }
    if let Some(priority) = filter.priority {
        query = query.push(" AND c.priority = ").push_bind(priority);
    }
    if let Some(assignee) = filter.assigned_to_id {
        query = query.push(" AND c.assignee = ").push_bind(assignee);
    }
    if let Some(team) = filter.team_id {
        query = query.push(" AND c.team = ").push_bind(team);
    }
    if let Some(assigned) = filter.assigned {
        // A counter row never holds NULL: "no assignee" is the nil UUID
        // (its key column is NOT NULL; 0022_ticket_teams.sql), so `IS NULL`
        // would count nothing. Bound last, after `filtered`'s values: the
        // page never embeds this count (see `page_total`).
        let test = if assigned {
            " AND c.assignee <> "
        } else {
            " AND c.assignee = "
        };
        query = query.push(test).push_bind(Uuid::nil());
    }
    Some(query)
}
