//! Listing tickets: a page of a filter's tickets (a search's ranked best
//! first), and how many there are in all.

mod count;

use uuid::Uuid;

pub use count::count;
use count::{PageTotal, page_total};

use super::search;
use super::{TICKET_SELECT, TicketRow};
use crate::attachments::links::Signer;
use crate::attachments::store::{self as attachment_store, Kind};
use crate::auth::{Mode, Tenant};
use crate::custom_fields::store::{self as field_store, Recorded};
use crate::db::{Backend, Db, Query};
use crate::error::StoreError;
use crate::model::{Ticket, TicketFilter, ticket_number};
use crate::paging::{After, COUNT_CAP, Order, Total, push_after};
use crate::search::Rank;
use crate::sla::clocks::store as sla_store;
use crate::tags::store::{self as tag_store, Tagged};
use crate::time::Timestamp;
use crate::validate::Page;

/// `select` WHERE the tenant's tickets match `filter`: only the filters
/// given, so that each combination matches its index in 0004_tickets.sql
/// exactly; tag and custom field filters are EXISTS probes of
/// `ticket_tags`'s primary key and of `ticket_field_values`.
/// With a search, also how to rank the matches (valid in this statement).
fn filtered(
    backend: Backend,
    select: &str,
    tenant: &Tenant,
    filter: &TicketFilter,
) -> (Query, Option<Rank>) {
    let search = filter.search.as_ref().map(search::of);
    let join = search.map_or(String::new(), |s| s.join(backend, "t.id"));
    let mut query = Query::new(format!("{select}{join}"))
        .push(" WHERE ")
        .push_tenant_in_teams(tenant, "t", "team_id");
    if let Some(number) = filter.number {
        // The unique (company, mode, number) index finds the one ticket.
        query = query
            .push(" AND t.ticket_number = ")
            .push_bind(ticket_number(number));
    }
    if let Some(entity) = filter.entity_id {
        query = query.push(" AND t.entity_id = ").push_bind(entity);
    }
    if let Some(status) = filter.status {
        query = query.push(" AND t.status = ").push_bind(status);
    }
    if let Some(priority) = filter.priority {
        query = query.push(" AND t.priority = ").push_bind(priority);
    }
    if let Some(assignee) = filter.assigned_to_id {
        query = query.push(" AND t.assigned_to_id = ").push_bind(assignee);
    }
    if let Some(assigned) = filter.assigned {
        let test = if assigned {
            " AND t.assigned_to_id IS NOT NULL"
        } else {
            " AND t.assigned_to_id IS NULL"
        };
        query = query.push(test);
    }
    if let Some(team) = filter.team_id {
        query = query.push(" AND t.team_id = ").push_bind(team);
    }
    if let Some(snoozed) = filter.snoozed {
        // Snoozed until a time still to come: a due ticket the wake pass
        // has not reached yet already counts as awake.
        let condition = match snoozed.snoozed {
            true => " AND t.snoozed_until > ",
            false => " AND (t.snoozed_until IS NULL OR t.snoozed_until <= ",
        };
        query = query.push(condition).push_bind(snoozed.now);
        if !snoozed.snoozed {
            query = query.push(")");
        }
    }
    let query = sla_store::push_filter(query, "t.id", filter.sla_breached, filter.sla_due_before);
    let query = tag_store::push_filter(query, Tagged::Ticket, "t.id", &filter.tags);
    let query = field_store::push_filter(query, Recorded::Ticket, "t.id", &filter.custom_fields);
    match search {
        Some(search) => {
            let (query, rank) = search.push_match(query, backend, tenant);
            (query, Some(rank))
        }
        None => (query, None),
    }
}

/// A page of `filter`'s tickets, newest first; read with one row more than
/// `page.limit` (it says whether a next page exists). A search goes to
/// [`ranked_query`].
fn list_query(
    backend: Backend,
    tenant: &Tenant,
    filter: &TicketFilter,
    page: Page,
    after: Option<&After>,
    total: &PageTotal,
) -> Query {
    if filter.search.is_some() {
        return ranked_query(backend, tenant, filter, page);
    }
    // The total in the same statement where a counter row answers it: its
    // placeholders are the page's own first ones (the tenant, then the
    // filters, bound in the same order by both), so it adds no values.
    let select = match total {
        PageTotal::WithRows(count) => TICKET_SELECT.replacen(
            " FROM tickets t",
            &format!(", ({}) AS list_total FROM tickets t", count.sql()),
            1,
        ),
        PageTotal::Counted(_) => TICKET_SELECT.to_string(),
    };
    let (query, _) = filtered(backend, &select, tenant, filter);
    let order = if filter.by_sla_due {
        format!("{}, ", sla_store::SOONEST_DUE_ORDER)
    } else {
        String::new()
    };
    push_after(query, "t", after, Order::NewestFirst)
        .push(&format!(
            " ORDER BY {order}t.created_at DESC, t.id DESC LIMIT "
        ))
        .push_bind(page.limit + 1)
        .push(" OFFSET ")
        .push_bind(page.offset)
}

/// A page of a search: every match, read through the search index and
/// ranked, best first (newest first among equals), paged by offset (a rank
/// is not a position a cursor could hold); only the page's rows are then
/// read. Every match is ranked, so an old ticket that matches best is
/// found however many newer ones share a common word. That costs time in
/// proportion to the matches (a word in 10% of a million tickets: about
/// 0.3–0.45 s on Postgres on a 2-core machine, the same as reading them in
/// creation order for the newest thousand did, since both visit every
/// matching row; a word in a few hundred tickets: milliseconds).
fn ranked_query(backend: Backend, tenant: &Tenant, filter: &TicketFilter, page: Page) -> Query {
    let (matches, rank) = matching(backend, " FROM tickets t", tenant, filter);
    let best = rank.best_first;
    matches
        .prefixed(&format!(
            "{TICKET_SELECT} JOIN (SELECT ranked_id, ranked_at, search_rank FROM (\
             SELECT search_doc.ticket_id AS ranked_id, search_doc.created_at AS ranked_at, \
             {} AS search_rank",
            rank.expression
        ))
        .push(&format!(
            ") matches ORDER BY search_rank {best}, ranked_at DESC, ranked_id DESC LIMIT "
        ))
        .push_bind(page.limit + 1)
        .push(" OFFSET ")
        .push_bind(page.offset)
        .push(&format!(
            ") page ON page.ranked_id = t.id \
             ORDER BY page.search_rank {best}, page.ranked_at DESC, page.ranked_id DESC"
        ))
}

/// The matches of a search, `select` (the text after the column list,
/// used when other filters need the ticket rows) WHERE they meet `filter`;
/// a search alone reads only the search documents, which carry the tenant:
/// a million-ticket company's common word then costs no ticket lookups. A
/// tenant limited to teams reads the ticket rows, which carry the team.
/// The columns are the caller's to put in front (`Query::prefixed`).
fn matching(
    backend: Backend,
    select: &str,
    tenant: &Tenant,
    filter: &TicketFilter,
) -> (Query, Rank) {
    match filter.search.as_ref().map(search::of) {
        Some(search) if !filter.filters_records() && tenant.sees_all() => {
            let documents = Query::new(format!("{} WHERE TRUE", search.from_documents(backend)));
            search.push_match(documents, backend, tenant)
        }
        _ => {
            let (query, rank) = filtered(backend, select, tenant, filter);
            (query, rank.unwrap_or_else(Rank::none))
        }
    }
}

/// The SQL text of `list`'s page query for `filter`, first page or (with
/// `cursor`) a cursor page (the text does not depend on the values bound).
/// Its binds: company id, mode, the given filters in field order, then for a
/// cursor page its created_at and id, then limit, offset. Public for the
/// test that checks every filter combination reads an index in order.
#[doc(hidden)]
pub fn list_sql(filter: &TicketFilter, cursor: bool) -> String {
    let any_tenant = Tenant::new(Uuid::nil(), Mode::Test);
    let any_page = Page {
        limit: 0,
        offset: 0,
    };
    // Only the SQL text is wanted: no time is read.
    let any_position = After {
        created_at: Timestamp(chrono::DateTime::UNIX_EPOCH),
        id: Uuid::nil(),
    };
    let after = cursor.then_some(&any_position);
    let total = match page_total(&any_tenant, filter) {
        Some(count) => PageTotal::WithRows(count),
        None => PageTotal::Counted(Total::exact(0)),
    };
    list_query(
        Backend::Sqlite,
        &any_tenant,
        filter,
        any_page,
        after,
        &total,
    )
    .sql()
    .to_string()
}

/// One page of the tenant's tickets, best match first when searching, then
/// newest first (id breaks ties), read with one row more than `page.limit`
/// (it says whether a next page exists), and the total matching `filter`.
pub async fn list(
    db: &Db,
    tenant: &Tenant,
    filter: &TicketFilter,
    page: Page,
    after: Option<&After>,
    signer: &Signer,
) -> Result<(Vec<Ticket>, Total), StoreError> {
    let page_total = match page_total(tenant, filter) {
        Some(count) => PageTotal::WithRows(count),
        None => PageTotal::Counted(count(db, tenant, filter, COUNT_CAP).await?),
    };
    let rows: Vec<TicketRow> = list_query(db.backend(), tenant, filter, page, after, &page_total)
        .fetch_all(db)
        .await?;
    let total = match (page_total, rows.first()) {
        (PageTotal::Counted(total), _) => total,
        (PageTotal::WithRows(_), Some(row)) => Total::exact(row.list_total.unwrap_or(0)),
        // An empty page has no row to carry the total.
        (PageTotal::WithRows(count), None) => Total::exact(count.fetch_scalar(db).await?),
    };
    // Only the tickets the rows say have some: most pages need neither read.
    let with = |has: fn(&TicketRow) -> bool| -> Vec<Uuid> {
        rows.iter()
            .filter(|row| has(row))
            .map(|row| row.id)
            .collect()
    };
    let mut files =
        attachment_store::of_each(db, Kind::Ticket, &with(|row| row.has_attachments), signer)
            .await?;
    let mut clocks = sla_store::of_each(db, &with(|row| row.has_sla_clocks)).await?;
    let mut links = super::link_rows::of_each(db, &with(|row| row.has_links)).await?;
    let tickets = rows
        .into_iter()
        .map(|row| {
            let attachments = files.remove(&row.id).unwrap_or_default();
            let sla = sla_store::sla_of(
                row.sla_policy_id,
                &clocks.remove(&row.id).unwrap_or_default(),
            );
            let links = links.remove(&row.id).unwrap_or_default();
            Ticket {
                attachments,
                sla,
                links,
                ..row.into_ticket()
            }
        })
        .collect();
    Ok((tickets, total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TicketStatus;

    #[test]
    fn list_sql_numbers_only_the_given_filters() {
        let filter = TicketFilter {
            status: Some(TicketStatus::Open),
            assigned_to_id: Some(Uuid::now_v7()),
            ..Default::default()
        };
        let select = TICKET_SELECT.replacen(
            " FROM tickets t",
            ", (SELECT CAST(COALESCE(SUM(c.tickets), 0) AS BIGINT) FROM ticket_counts c \
             WHERE c.company_id = $1 AND c.mode = $2 AND c.status = $3 AND c.assignee = $4) \
             AS list_total FROM tickets t",
            1,
        );
        assert_eq!(
            list_sql(&filter, false),
            format!(
                "{select} WHERE t.company_id = $1 AND t.mode = $2 AND t.status = $3 \
                 AND t.assigned_to_id = $4 ORDER BY t.created_at DESC, t.id DESC \
                 LIMIT $5 OFFSET $6"
            )
        );
        assert_eq!(
            list_sql(&filter, true),
            format!(
                "{select} WHERE t.company_id = $1 AND t.mode = $2 AND t.status = $3 \
                 AND t.assigned_to_id = $4 AND (t.created_at, t.id) < ($5, $6) \
                 ORDER BY t.created_at DESC, t.id DESC LIMIT $7 OFFSET $8"
            )
        );
    }

    #[test]
    fn a_tag_filter_leaves_the_total_to_its_own_count() {
        let filter = TicketFilter {
            tags: crate::tags::model::TagFilter {
                all: vec!["vip".into()],
                any: Vec::new(),
            },
            ..Default::default()
        };
        assert!(!list_sql(&filter, false).contains("list_total"));
    }
}
