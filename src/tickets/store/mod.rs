//! SQL for tickets, their comments and their timeline. Every change runs in
//! one transaction with its timeline entry, its events and its emails, so a
//! committed change always has them and a rolled-back one never does.

mod activities;
mod comments;
mod plain;
mod search;

pub use activities::list_activities;
use activities::{NewActivity, add_activity};
pub use comments::{add_comment, list_comments};
pub use plain::Subscribers;

use std::collections::BTreeMap;

use serde_json::json;
use sqlx::types::Json;
use uuid::Uuid;

use super::events;
use super::model::{
    ActivityKind, Change, Escalation, NewTicket, Priority, Ticket, TicketAssignment, TicketFilter,
    TicketState, TicketStatus, TicketUpdate, UserRef, ticket_number,
};
use crate::attachments::store::{self as attachment_store, Kind, Owner};
use crate::auth::{Mode, Tenant};
use crate::custom_fields::model::{FieldChange, FieldValues};
use crate::custom_fields::store::{self as field_store, Recorded};
use crate::db::{Backend, Db, On, Query, Table, Tx, ensure_reference};
use crate::error::StoreError;
use crate::events::{RecordChange, RecordType};
use crate::paging::{After, COUNT_CAP, Order, Total, capped_count, push_after};
use crate::search::Rank;
use crate::sla::cache::{self as sla_cache, SlaCache};
use crate::sla::clocks::store::{self as sla_store, Happening, Met, NewTicketFacts, Opening};
use crate::tags::model::{TagChange, TagEdit};
use crate::tags::store::{self as tag_store, Tagged};
use crate::teams::claim::Reason;
use crate::teams::store as team_store;
use crate::time::{Timestamp, new_id};
use crate::validate::Page;

/// A ticket with its assignee and tags (joined by spaces: read them with
/// `tag_store::split_joined`), and whether it has attachments or SLA
/// clocks, in one statement (no query per row): a ticket without
/// attachments or clocks is read in one round trip.
const TICKET_SELECT: &str = "SELECT t.id, t.ticket_number, t.subject, t.description, t.status, \
     t.priority, t.entity_id, t.visitor_email, t.chat_session_id, t.visitor_external_id, \
     t.visitor_name, t.visitor_verified, t.assigned_to_id, u.name AS assignee_name, \
     u.email AS assignee_email, t.team_id, t.custom_fields, t.resolved_at, t.created_at, \
     t.updated_at, t.sla_policy_id, \
     (SELECT string_agg(g.tag, ' ') FROM ticket_tags g WHERE g.ticket_id = t.id) AS tag_list, \
     EXISTS (SELECT 1 FROM attachments a WHERE a.ticket_id = t.id AND a.comment_id IS NULL) \
     AS has_attachments, \
     EXISTS (SELECT 1 FROM ticket_sla c WHERE c.ticket_id = t.id) AS has_sla_clocks \
     FROM tickets t LEFT JOIN users u ON u.id = t.assigned_to_id";

/// `SELECT … WHERE t.id = $1 AND` the tenant's.
fn by_id(select: &str, tenant: &Tenant, id: Uuid) -> Query {
    Query::new(select)
        .push(" WHERE t.id = ")
        .push_bind(id)
        .push(" AND ")
        .push_tenant(tenant, "t")
}

#[derive(sqlx::FromRow)]
struct TicketRow {
    id: Uuid,
    ticket_number: String,
    subject: String,
    description: Option<String>,
    status: TicketStatus,
    priority: Priority,
    entity_id: Uuid,
    visitor_email: Option<String>,
    chat_session_id: Option<Uuid>,
    visitor_external_id: Option<String>,
    visitor_name: Option<String>,
    visitor_verified: bool,
    assigned_to_id: Option<Uuid>,
    assignee_name: Option<String>,
    assignee_email: Option<String>,
    team_id: Option<Uuid>,
    custom_fields: Json<FieldValues>,
    resolved_at: Option<Timestamp>,
    created_at: Timestamp,
    updated_at: Timestamp,
    sla_policy_id: Option<Uuid>,
    tag_list: Option<String>,
    has_attachments: bool,
    has_sla_clocks: bool,
    /// The list's total, on a page that counts it in the same statement.
    #[sqlx(default)]
    list_total: Option<i64>,
}

impl TicketRow {
    /// The ticket, without its attachments and SLA (read apart, when the
    /// row says there are some).
    fn into_ticket(self) -> Ticket {
        let row = self;
        let tags = tag_store::split_joined(row.tag_list.as_deref());
        let assigned_to = user_ref(row.assigned_to_id, row.assignee_name, row.assignee_email);
        // A ticket is from a visitor when it was made from a chat, which
        // always names its visitor.
        let visitor = row.visitor_name.map(|name| crate::chat::model::Visitor {
            external_id: row.visitor_external_id,
            email: row.visitor_email.clone(),
            name,
            verified: row.visitor_verified,
        });
        Ticket {
            id: row.id,
            ticket_number: row.ticket_number,
            subject: row.subject,
            description: row.description,
            status: row.status,
            priority: row.priority,
            entity_id: row.entity_id,
            visitor_email: row.visitor_email,
            chat_session_id: row.chat_session_id,
            visitor,
            assigned_to_id: row.assigned_to_id,
            assigned_to,
            team_id: row.team_id,
            tags,
            custom_fields: field_store::sorted(row.custom_fields.0),
            attachments: Vec::new(),
            resolved_at: row.resolved_at,
            created_at: row.created_at,
            updated_at: row.updated_at,
            sla: None,
        }
    }
}

fn user_ref(id: Option<Uuid>, name: Option<String>, email: Option<String>) -> Option<UserRef> {
    match (id, name, email) {
        (Some(id), Some(name), Some(email)) => Some(UserRef { id, name, email }),
        _ => None,
    }
}

/// Creates a ticket (OPEN) with the next number of the tenant, its
/// `created` timeline entry, `ticket.created` and the visitor's email.
/// `now` is the node's clock (`AppState::clock`): the SLA clocks start at
/// the creation time, and a test's fake clock must move them.
///
/// The SLA policy is chosen from the tenant's cached rules and the facts
/// given here, before the row is written, so choosing it reads nothing.
pub async fn create(
    db: &Db,
    sla: &SlaCache,
    subscribers: &Subscribers,
    tenant: &Tenant,
    new: NewTicket,
    now: Timestamp,
) -> Result<Ticket, StoreError> {
    let rules = sla_cache::rules(sla, db, tenant).await?;
    let facts = NewTicketFacts {
        priority: new.priority,
        entity_id: new.entity_id,
        team_id: new.team_id,
        tags: &new.tags,
        chat_session_id: new.chat_session_id,
        created_at: now,
    };
    let opening = if rules.any_enabled() {
        sla_store::opening(&rules, &facts)
    } else {
        Opening::Nothing
    };
    let id = new_id();
    // Only the row and its tags are written: the ticket is what was
    // written, with no read back (a round trip less). Field values,
    // attachments and SLA clocks are read back as stored.
    let row_and_tags_only = new.custom_fields.is_empty() && new.attachment_ids.is_empty();
    let as_written = row_and_tags_only && matches!(opening, Opening::Nothing);
    // The row alone, its number reserved beforehand: one statement (see
    // `plain`).
    let plain = row_and_tags_only && new.tags.is_empty() && db.backend() == Backend::Postgres;
    let clocks = plain
        .then(|| sla_store::started_without_reading(id, &opening, &facts))
        .flatten();
    // ... which commits by itself when nothing else is written: no
    // reference to check first, no email, no request bookkeeping.
    let alone = clocks.is_some()
        && new.team_id.is_none()
        && new.chat_session_id.is_none()
        && new.visitor_email.is_none()
        && !crate::db::commit_hook_installed()
        && !subscribers.seen(tenant);
    let (mut tx, numbering) = begin_numbered(db, tenant, alone).await?;
    // The insert below checks the entity itself (a round trip less). With a
    // team or a chat to check as well, the entity is checked first, so a
    // request naming a wrong entity hears of the entity first.
    if new.team_id.is_some() || new.chat_session_id.is_some() {
        ensure_reference(
            &mut tx,
            tenant.company_id,
            Table::Entities,
            new.entity_id,
            "entityId",
        )
        .await?;
    }
    if let Some(team) = new.team_id {
        team_store::ensure_team(&mut tx, tenant, team, "teamId").await?;
    }
    let from_chat = match new.chat_session_id {
        Some(session) => Some(chat_visitor(&mut tx, tenant, session).await?),
        None => None,
    };
    // An email the visitor typed but never confirmed is not mailed.
    let visitor_email = new.visitor_email.clone().or_else(|| {
        from_chat
            .as_ref()
            .filter(|chat| chat.email_verified)
            .and_then(|chat| chat.visitor_email.clone())
    });
    let (number_sql, given_number) = match numbering {
        Numbering::Reserved => (RESERVED_NUMBER, None),
        Numbering::InTransaction => (
            "$5",
            Some(ticket_number(next_number(&mut tx, tenant).await?)),
        ),
    };
    // Inserts nothing when the entity is not one of the company's.
    let insert = Query::new(format!(
        "INSERT INTO tickets (id, company_id, mode, entity_id, ticket_number, subject, \
         description, status, priority, visitor_email, team_id, created_at, updated_at, \
         chat_session_id, visitor_external_id, visitor_name, visitor_verified, sla_policy_id) \
         SELECT $1, $2, $3, $4, {number_sql}, $6, $7, $8, $9, $10, $11, $12, $12, $13, $14, $15, \
         $16, $17 FROM entities e WHERE e.id = $4 AND e.company_id = $2"
    ))
    .bind(id)
    .bind_tenant(tenant)
    .bind(new.entity_id)
    .bind(given_number)
    .bind(&new.subject)
    .bind(new.description.as_deref())
    .bind(TicketStatus::Open.as_str())
    .bind(new.priority.as_str())
    .bind(visitor_email.as_deref())
    .bind(new.team_id)
    .bind(now)
    .bind(new.chat_session_id)
    .bind(
        from_chat
            .as_ref()
            .and_then(|c| c.visitor_external_id.clone()),
    )
    .bind(from_chat.as_ref().map(|c| c.visitor_name.clone()))
    .bind(from_chat.as_ref().is_some_and(|c| c.visitor_verified))
    .bind(opening.policy_id());
    let entry = NewActivity {
        to: Some(TicketStatus::Open.to_string()),
        details: Some(json!({"priority": new.priority, "tags": new.tags,
            "customFields": new.custom_fields, "teamId": new.team_id})),
        ..NewActivity::new(ActivityKind::Created)
    };
    if let Some(clocks) = clocks {
        let mut ticket = written(id, String::new(), new, visitor_email, from_chat, &[], now);
        ticket.sla = sla_store::sla_of(opening.policy_id(), &clocks);
        let alongside = plain::Alongside {
            clocks: &clocks,
            entry,
        };
        let ticket = plain::insert(&mut tx, subscribers, tenant, insert, alongside, ticket).await?;
        tx.commit().await?;
        return Ok(ticket);
    }
    let insert = insert.push(" RETURNING ticket_number");
    let inserted: Option<(String,)> = insert.fetch_optional(&mut tx).await?;
    let Some((number,)) = inserted else {
        return Err(Table::Entities.invalid_reference("entityId"));
    };
    let tags = tag_store::add_to_new(&mut tx, tenant, Tagged::Ticket, id, &new.tags).await?;
    field_store::apply(&mut tx, tenant, Recorded::Ticket, id, &new.custom_fields).await?;
    let owner = Owner::Ticket(id);
    attachment_store::attach(&mut tx, tenant, owner, &new.attachment_ids, "attachmentIds").await?;
    // After the fields: a custom field condition reads them.
    let met = sla_store::start(&mut tx, tenant, id, &rules, &facts, opening).await?;
    let entry = NewActivity {
        details: entry.details.map(|mut details| {
            details["ticketNumber"] = json!(number);
            details
        }),
        ..entry
    };
    add_activity(&mut tx, tenant, id, entry, now).await?;
    let ticket = if as_written {
        written(id, number, new, visitor_email, from_chat, &tags, now)
    } else {
        load(&mut tx, tenant, id).await?
    };
    events::created(&mut tx, tenant, &ticket).await?;
    if !met.is_empty() {
        record_sla(&mut tx, tenant, id, &met).await?;
    }
    tx.commit().await?;
    Ok(ticket)
}

/// A new ticket as written (the row and its `tags`, nothing else), mapped
/// as a read maps the row.
fn written(
    id: Uuid,
    ticket_number: String,
    new: NewTicket,
    visitor_email: Option<String>,
    from_chat: Option<ChatVisitor>,
    tags: &[String],
    now: Timestamp,
) -> Ticket {
    let (visitor_external_id, visitor_name, visitor_verified) = match from_chat {
        Some(chat) => (
            chat.visitor_external_id,
            Some(chat.visitor_name),
            chat.visitor_verified,
        ),
        None => (None, None, false),
    };
    TicketRow {
        id,
        ticket_number,
        subject: new.subject,
        description: new.description,
        status: TicketStatus::Open,
        priority: new.priority,
        entity_id: new.entity_id,
        visitor_email,
        chat_session_id: new.chat_session_id,
        visitor_external_id,
        visitor_name,
        visitor_verified,
        assigned_to_id: None,
        assignee_name: None,
        assignee_email: None,
        team_id: new.team_id,
        custom_fields: Json(FieldValues::default()),
        resolved_at: None,
        created_at: now,
        updated_at: now,
        sla_policy_id: None,
        tag_list: (!tags.is_empty()).then(|| tags.join(" ")),
        has_attachments: false,
        has_sla_clocks: false,
        list_total: None,
    }
    .into_ticket()
}

/// The visitor of a chat session a ticket is made from.
#[derive(sqlx::FromRow)]
struct ChatVisitor {
    visitor_external_id: Option<String>,
    visitor_email: Option<String>,
    visitor_name: String,
    visitor_verified: bool,
    email_verified: bool,
}

/// The visitor of the tenant's chat session `id`; another tenant's (or no)
/// session is a 400 on `chatSessionId`.
async fn chat_visitor(tx: &mut Tx, tenant: &Tenant, id: Uuid) -> Result<ChatVisitor, StoreError> {
    let found: Option<ChatVisitor> = Query::new(
        "SELECT s.visitor_external_id, s.visitor_email, s.visitor_name, s.visitor_verified, \
         s.email_verified FROM chat_sessions s WHERE s.id = ",
    )
    .push_bind(id)
    .push(" AND ")
    .push_tenant(tenant, "s")
    .fetch_optional(tx)
    .await?;
    found.ok_or_else(|| StoreError::InvalidReference {
        field: "chatSessionId".into(),
        message: "must be a chat session of the key's company and mode".into(),
    })
}

/// Where a new ticket's number comes from.
enum Numbering {
    /// Taken before the ticket's transaction, left in `RESERVED_NUMBER`.
    Reserved,
    /// To be taken inside the transaction (`next_number`).
    InTransaction,
}

/// The number `begin_numbered` reserved, formatted as `ticket_number` does
/// (six digits at least).
const RESERVED_NUMBER: &str = "COALESCE($5, current_setting('supportdesk.ticket_number'))";

/// Begins a ticket's transaction. On Postgres the tenant's next number is
/// taken first, in the same round trip (`Db::begin_after_committing`) but
/// in a transaction of its own (docs/api.md, tickets, "Numbers"): the
/// counter row is locked for that one statement, so concurrent creates of
/// a company do not wait for each other's commits, and a create that then
/// fails leaves a gap. That statement commits without waiting for its WAL
/// flush: the ticket's commit comes later in the WAL and flushes it, so a
/// crash can only lose a number no committed ticket holds.
///
/// On SQLite, which has one writer at a time anyway, the number is taken
/// inside the ticket's transaction and a rolled-back create gives it back.
///
/// `alone`: the create's one statement will commit by itself, so the
/// reservation is not followed by `BEGIN` (`Db::autocommit_after`).
async fn begin_numbered(
    db: &Db,
    tenant: &Tenant,
    alone: bool,
) -> Result<(Tx, Numbering), StoreError> {
    if db.backend() != Backend::Postgres {
        return Ok((db.begin().await?, Numbering::InTransaction));
    }
    // Literal values: the simple protocol that carries several statements
    // has no parameters. A company id and a mode cannot hold a quote.
    let reservation = format!(
        "WITH reserved AS (INSERT INTO counters (company_id, mode, name, value) \
         VALUES ('{company}', '{mode}', 'ticket', 1) \
         ON CONFLICT (company_id, mode, name) DO UPDATE SET value = counters.value + 1 \
         RETURNING value) \
         SELECT set_config('supportdesk.ticket_number', \
         'TKT-' || lpad(value::text, greatest(6, length(value::text)), '0'), false), \
         set_config('synchronous_commit', 'off', true) FROM reserved",
        company = tenant.company_id,
        mode = tenant.mode.as_str(),
    );
    let tx = match alone {
        true => db.autocommit_after(&reservation).await?,
        false => db.begin_after_committing(&reservation).await?,
    };
    Ok((tx, Numbering::Reserved))
}

/// The next value of the tenant's ticket sequence, in `tx` (SQLite). The
/// counter row stays locked until `tx` ends, so creates take turns: no
/// duplicates, and a rollback gives the number back.
async fn next_number(tx: &mut Tx, tenant: &Tenant) -> Result<i64, StoreError> {
    Query::new(
        "INSERT INTO counters (company_id, mode, name, value) VALUES ($1, $2, 'ticket', 1) \
         ON CONFLICT (company_id, mode, name) DO UPDATE SET value = counters.value + 1 \
         RETURNING value",
    )
    .bind_tenant(tenant)
    .fetch_scalar(tx)
    .await
}

/// The ticket `id` of the tenant; another tenant's is NotFound.
pub async fn find(db: &Db, tenant: &Tenant, id: Uuid) -> Result<Ticket, StoreError> {
    load(db, tenant, id).await
}

/// `find` on the pool or inside a transaction (to answer with what was
/// just written): the row (with its tags), then its attachments and SLA
/// clocks where the row says it has some.
async fn load<'c>(on: impl Into<On<'c>>, tenant: &Tenant, id: Uuid) -> Result<Ticket, StoreError> {
    let mut on = on.into();
    let row: TicketRow = by_id(TICKET_SELECT, tenant, id)
        .fetch_one(on.reborrow())
        .await?;
    let (policy_id, has_attachments, has_clocks) =
        (row.sla_policy_id, row.has_attachments, row.has_sla_clocks);
    let mut ticket = row.into_ticket();
    if has_attachments {
        ticket.attachments = attachment_store::of(on.reborrow(), Owner::Ticket(id)).await?;
    }
    ticket.sla = match has_clocks {
        true => sla_store::of(on, id, policy_id).await?,
        false => sla_store::sla_of(policy_id, &[]),
    };
    Ok(ticket)
}

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
        .push_tenant(tenant, "t");
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
    if let Some(team) = filter.team_id {
        query = query.push(" AND t.team_id = ").push_bind(team);
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

/// How many of a search's matches are ranked: the newest this many that
/// meet every filter. Ranking every match of a common word costs time in
/// proportion to the company's tickets (a word in 10% of a million tickets
/// took 1.5 s); the newest thousand are found by walking
/// `ticket_search_recent` and rank in milliseconds. Pages past them are
/// empty (docs/api.md says so); `total` still counts up to its own cap.
pub const RANKED_MATCHES: i64 = 1_000;

/// A page of `filter`'s tickets, newest first; read with one row more than
/// `page.limit` (it says whether a next page exists). A search goes to
/// [`ranked_query`], told by `matches` (its count) whether to rank them all.
fn list_query(
    backend: Backend,
    tenant: &Tenant,
    filter: &TicketFilter,
    page: Page,
    after: Option<&After>,
    total: &PageTotal,
) -> Query {
    if filter.search.is_some() {
        let matches = match total {
            PageTotal::Counted(matches) => *matches,
            PageTotal::WithRows(_) => Total::exact(0),
        };
        // Chosen from the count rather than left to the planner: its guess
        // at how often a rare word or a prefix occurs can be far off, and
        // reading a million documents in creation order for the newest
        // matches of a text that has one took 250 ms.
        let newest_only = matches.is_lower_bound || matches.value > RANKED_MATCHES;
        return ranked_query(backend, tenant, filter, page, newest_only);
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

/// A page of a search: its matches (with `newest_only`, the newest
/// [`RANKED_MATCHES`], read in creation order; else all of them, read
/// through the search index), ranked best first (newest first among
/// equals), paged by offset (a rank is not a position a cursor could
/// hold); only the page's rows are then read.
fn ranked_query(
    backend: Backend,
    tenant: &Tenant,
    filter: &TicketFilter,
    page: Page,
    newest_only: bool,
) -> Query {
    let (matches, rank) = matching(backend, " FROM tickets t", tenant, filter);
    let best = rank.best_first;
    let newest = if newest_only {
        format!(
            " ORDER BY search_doc.created_at DESC, search_doc.ticket_id DESC \
             LIMIT {RANKED_MATCHES}"
        )
    } else {
        String::new()
    };
    matches
        .prefixed(&format!(
            "{TICKET_SELECT} JOIN (SELECT ranked_id, ranked_at, search_rank FROM (\
             SELECT search_doc.ticket_id AS ranked_id, search_doc.created_at AS ranked_at, \
             {} AS search_rank",
            rank.expression
        ))
        .push(&format!(
            "{newest}) matches ORDER BY search_rank {best}, ranked_at DESC, ranked_id DESC LIMIT "
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
/// a million-ticket company's common word then costs no ticket lookups.
/// The columns are the caller's to put in front (`Query::prefixed`).
fn matching(
    backend: Backend,
    select: &str,
    tenant: &Tenant,
    filter: &TicketFilter,
) -> (Query, Rank) {
    match filter.search.as_ref().map(search::of) {
        Some(search) if !filter.filters_records() => {
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
    let any_tenant = Tenant {
        company_id: Uuid::nil(),
        mode: Mode::Test,
    };
    let any_page = Page {
        limit: 0,
        offset: 0,
    };
    let any_position = After {
        created_at: Timestamp::now(),
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
        attachment_store::of_each(db, Kind::Ticket, &with(|row| row.has_attachments)).await?;
    let mut clocks = sla_store::of_each(db, &with(|row| row.has_sla_clocks)).await?;
    let tickets = rows
        .into_iter()
        .map(|row| {
            let attachments = files.remove(&row.id).unwrap_or_default();
            let sla = sla_store::sla_of(
                row.sla_policy_id,
                &clocks.remove(&row.id).unwrap_or_default(),
            );
            Ticket {
                attachments,
                sla,
                ..row.into_ticket()
            }
        })
        .collect();
    Ok((tickets, total))
}

/// The number of the tenant's tickets matching `filter`. Without tag
/// filters, exact from `ticket_counts` (kept by triggers in every ticket
/// write's transaction; its migration says why): a sum over the few rows of
/// the tenant's (entity, status, priority, assignee, team) combinations,
/// whatever the number of tickets. On Postgres a combination is split over
/// up to 16 stripes that only mean something summed (one may be negative):
/// the sum adds them all. With a search, or tag, custom field or
/// SLA filters, which no counter follows, the matching tickets are counted
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
enum PageTotal {
    /// Counted before the page (a search needs it to choose its plan).
    Counted(Total),
    /// This exact count, a column of the page's own statement.
    WithRows(Query),
}

/// The count a page carries in its own statement: the exact one, for a
/// list without a search.
fn page_total(tenant: &Tenant, filter: &TicketFilter) -> Option<Query> {
    match filter.search {
        Some(_) => None,
        None => exact_count(tenant, filter),
    }
}

/// The exact count of `filter`'s tickets from `ticket_counts`, when no
/// filter beyond the counters' columns is given (search aside: `count`
/// handles it first). Its placeholders follow `filtered`'s order: the
/// tenant, then entity, status, priority, assignee and team.
fn exact_count(tenant: &Tenant, filter: &TicketFilter) -> Option<Query> {
    let sla_filtered = filter.sla_breached.is_some() || filter.sla_due_before.is_some();
    if !filter.tags.is_empty() || !filter.custom_fields.is_empty() || sla_filtered {
        return None;
    }
    let mut query = Query::new(
        "SELECT CAST(COALESCE(SUM(c.tickets), 0) AS BIGINT) FROM ticket_counts c WHERE ",
    )
    .push_tenant(tenant, "c");
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
    Some(query)
}

/// The changeable fields of a ticket, locked until the transaction ends
/// (SQLite's write transaction already excludes other writers).
async fn lock(tx: &mut Tx, tenant: &Tenant, id: Uuid) -> Result<TicketState, StoreError> {
    let lock = match tx.backend() {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    by_id(
        "SELECT t.status, t.priority, t.assigned_to_id, t.team_id, t.resolved_at FROM tickets t",
        tenant,
        id,
    )
    .push(lock)
    .fetch_one(tx)
    .await
}

async fn write_state(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    state: &TicketState,
    now: Timestamp,
) -> Result<(), StoreError> {
    Query::new(
        "UPDATE tickets SET status = $4, priority = $5, assigned_to_id = $6, team_id = $7, \
         resolved_at = $8, updated_at = $9 WHERE id = $1 AND company_id = $2 AND mode = $3",
    )
    .bind(id)
    .bind_tenant(tenant)
    .bind(state.status.as_str())
    .bind(state.priority.as_str())
    .bind(state.assigned_to_id)
    .bind(state.team_id)
    .bind(state.resolved_at)
    .bind(now)
    .execute(tx)
    .await
}

/// Applies a PATCH. Only fields whose value differs count: they get a
/// timeline entry each and one `ticket.updated` with `changes` (plus
/// `ticket.resolved` and the visitor's email when it became RESOLVED); a
/// PATCH that changes nothing writes nothing and emits nothing.
pub async fn update(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    update: TicketUpdate,
    now: Timestamp,
) -> Result<Ticket, StoreError> {
    update_with_rating_link(db, tenant, id, update, None, now).await
}

/// `update`; when the ticket becomes RESOLVED and its entity asks for
/// ratings automatically, the visitor's resolution email carries
/// `rating_link` (signed by the caller, which holds the signing key).
pub async fn update_with_rating_link(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    update: TicketUpdate,
    rating_link: Option<&str>,
    now: Timestamp,
) -> Result<Ticket, StoreError> {
    let mut tx = db.begin().await?;
    if let Some(Some(user)) = update.assigned_to_id {
        ensure_reference(
            &mut tx,
            tenant.company_id,
            Table::Users,
            user,
            "assignedToId",
        )
        .await?;
    }
    if let Some(Some(team)) = update.team_id {
        team_store::ensure_team(&mut tx, tenant, team, "teamId").await?;
    }
    let current = lock(&mut tx, tenant, id).await?;
    let changes = current.diff(&update);
    let tags = match &update.tags {
        Some(wanted) => tag_store::replace(&mut tx, tenant, Tagged::Ticket, id, wanted).await?,
        None => TagChange::default(),
    };
    let fields =
        field_store::apply(&mut tx, tenant, Recorded::Ticket, id, &update.custom_fields).await?;
    if changes.is_empty() && tags.is_empty() && fields.is_empty() {
        let ticket = load(&mut tx, tenant, id).await?;
        tx.commit().await?;
        return Ok(ticket);
    }
    let after = current.apply(&update, now);
    write_state(&mut tx, tenant, id, &after, now).await?;
    let met = move_sla_clocks(&mut tx, tenant, id, &current, &changes, now).await?;
    for change in &changes {
        let entry = NewActivity {
            from: change.from.clone(),
            to: change.to.clone(),
            ..NewActivity::new(change.activity_kind())
        };
        add_activity(&mut tx, tenant, id, entry, now).await?;
    }
    announce_tags(&mut tx, tenant, id, &tags, now).await?;
    announce_fields(&mut tx, tenant, id, &fields, now).await?;
    let ticket = load(&mut tx, tenant, id).await?;
    let assignment = (after.assigned_to_id != current.assigned_to_id).then_some(TicketAssignment {
        reason: Reason::Manual,
        team_id: after.team_id,
    });
    let announced = events::Announced {
        changes: &changes,
        tags: &tags,
        custom_fields: &fields,
        assignment,
        resolution: events::Resolution { rating_link },
    };
    events::updated(&mut tx, tenant, &ticket, announced).await?;
    if !met.is_empty() {
        record_sla(&mut tx, tenant, id, &met).await?;
    }
    tx.commit().await?;
    Ok(ticket)
}

/// The SLA clocks after a real change: the policy chosen again (a changed
/// priority, tag or field may select another one or other targets), then
/// the status's effect.
async fn move_sla_clocks(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    before: &TicketState,
    changes: &[Change],
    now: Timestamp,
) -> Result<Vec<Met>, StoreError> {
    sla_store::reevaluate(tx, tenant, id, now).await?;
    if changes.iter().any(|c| c.field == "status") {
        return sla_store::status_changed(tx, tenant, id, before.status, now).await;
    }
    Ok(Vec::new())
}

/// SLA warnings, breaches and fulfilments of a ticket: a timeline entry
/// each and its `sla.*` event with the ticket as it now is. The scheduler
/// records warnings and breaches through it, the ticket's own changes
/// their fulfilments.
pub async fn record_sla(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    met: &[Met],
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
    let ticket = load(&mut *tx, tenant, id).await?;
    for happening in met {
        events::sla(tx, tenant, &ticket, happening).await?;
    }
    Ok(())
}

/// Adds and removes tags (`POST /tickets/{id}/tags`) under the ticket's
/// lock, so concurrent edits each keep theirs. A real change touches the
/// ticket, gets a `tags_changed` timeline entry and a `ticket.updated`
/// with `changes.tags`; one that changes nothing writes nothing.
pub async fn edit_tags(
    db: &Db,
    tenant: &Tenant,
    id: Uuid,
    edit: TagEdit,
    now: Timestamp,
) -> Result<Ticket, StoreError> {
    let mut tx = db.begin().await?;
    let current = lock(&mut tx, tenant, id).await?;
    let tags = tag_store::edit(&mut tx, tenant, Tagged::Ticket, id, &edit).await?;
    if !tags.is_empty() {
        write_state(&mut tx, tenant, id, &current, now).await?;
        sla_store::reevaluate(&mut tx, tenant, id, now).await?;
        announce_tags(&mut tx, tenant, id, &tags, now).await?;
    }
    let ticket = load(&mut tx, tenant, id).await?;
    if !tags.is_empty() {
        let fields = BTreeMap::new();
        let announced = events::Announced {
            changes: &[],
            tags: &tags,
            custom_fields: &fields,
            assignment: None,
            resolution: events::Resolution::default(),
        };
        events::updated(&mut tx, tenant, &ticket, announced).await?;
    }
    tx.commit().await?;
    Ok(ticket)
}

/// The `tags_changed` timeline entry of a real tag change.
async fn announce_tags(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    tags: &TagChange,
    now: Timestamp,
) -> Result<(), StoreError> {
    if tags.is_empty() {
        return Ok(());
    }
    let entry = NewActivity {
        details: Some(json!(tags)),
        ..NewActivity::new(ActivityKind::TagsChanged)
    };
    add_activity(tx, tenant, id, entry, now).await
}

/// The `custom_fields_changed` timeline entry of a real change of values:
/// `details` is `{key: {from, to}}`.
async fn announce_fields(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    fields: &BTreeMap<String, FieldChange>,
    now: Timestamp,
) -> Result<(), StoreError> {
    if fields.is_empty() {
        return Ok(());
    }
    let entry = NewActivity {
        details: Some(json!(fields)),
        ..NewActivity::new(ActivityKind::CustomFieldsChanged)
    };
    add_activity(tx, tenant, id, entry, now).await
}

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
    let ticket = escalate_in(&mut tx, tenant, ticket_id, &escalation, now).await?;
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
) -> Result<Ticket, StoreError> {
    let current = lock(tx, tenant, ticket_id).await?;
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
    let summary = events::escalation_json(escalation, current.assigned_to_id);
    let mut details = summary.clone();
    details["changes"] = events::changes_json(&changes);
    let entry = NewActivity {
        details: Some(details),
        ..NewActivity::new(ActivityKind::Escalated)
    };
    add_activity(tx, tenant, ticket_id, entry, now).await?;
    let ticket = load(&mut *tx, tenant, ticket_id).await?;
    events::escalated(tx, tenant, &ticket, &summary).await?;
    if !met.is_empty() {
        record_sla(tx, tenant, ticket_id, &met).await?;
    }
    Ok(ticket)
}

/// Routing's assignment of ticket `id` to `agent`, in the claim's
/// transaction (which holds the team's and the members' locks): only if
/// the ticket is still in `team`, unassigned and open (OPEN or
/// IN_PROGRESS), so a person's assignment that came first is never
/// overwritten. Records the timeline entry and `ticket.updated` with
/// `assignment {reason: "routing", teamId}`; `None` when the ticket moved
/// on meanwhile.
pub async fn assign_by_routing(
    tx: &mut Tx,
    tenant: &Tenant,
    id: Uuid,
    team: Uuid,
    agent: Uuid,
) -> Result<Option<Ticket>, StoreError> {
    let current = match lock(tx, tenant, id).await {
        Ok(current) => current,
        Err(StoreError::NotFound) => return Ok(None),
        Err(other) => return Err(other),
    };
    if current.assigned_to_id.is_some() || current.team_id != Some(team) || !current.is_open_work()
    {
        return Ok(None);
    }
    let update = TicketUpdate {
        assigned_to_id: Some(Some(agent)),
        ..Default::default()
    };
    let changes = current.diff(&update);
    let now = Timestamp::now();
    write_state(tx, tenant, id, &current.apply(&update, now), now).await?;
    let assignment = TicketAssignment {
        reason: Reason::Routing,
        team_id: Some(team),
    };
    for change in &changes {
        let entry = NewActivity {
            from: change.from.clone(),
            to: change.to.clone(),
            details: Some(json!({ "assignment": assignment })),
            ..NewActivity::new(change.activity_kind())
        };
        add_activity(tx, tenant, id, entry, now).await?;
    }
    let ticket = load(&mut *tx, tenant, id).await?;
    let announced = events::Announced {
        changes: &changes,
        tags: &TagChange::default(),
        custom_fields: &BTreeMap::new(),
        assignment: Some(assignment),
        resolution: events::Resolution::default(),
    };
    events::updated(tx, tenant, &ticket, announced).await?;
    Ok(Some(ticket))
}

/// Deletes a ticket with its comments, timeline and attachment rows. The
/// change feed gets a delete for each comment (the database deletes them
/// with the ticket) and then for the ticket, so a mirror ends without
/// either. Answers the SHA-256s of the files it had, for the caller to
/// release the bytes no other record uses.
pub async fn delete(db: &Db, tenant: &Tenant, id: Uuid) -> Result<Vec<String>, StoreError> {
    let mut tx = db.begin().await?;
    let hashes = attachment_store::hashes_of_ticket(&mut tx, tenant, id).await?;
    let comments: Vec<Uuid> = Query::new("SELECT c.id FROM ticket_comments c WHERE c.ticket_id = ")
        .push_bind(id)
        .push(" AND ")
        .push_tenant(tenant, "c")
        .push(" ORDER BY c.created_at, c.id")
        .fetch_column(&mut tx)
        .await?;
    Query::new("DELETE FROM tickets WHERE id = $1 AND company_id = $2 AND mode = $3")
        .bind(id)
        .bind_tenant(tenant)
        .execute_or_not_found(&mut tx)
        .await?;
    for comment in comments {
        let change = RecordChange::delete(RecordType::Comment, comment);
        crate::events::record_change(&mut tx, tenant, &change).await?;
    }
    let change = RecordChange::delete(RecordType::Ticket, id);
    crate::events::record_change(&mut tx, tenant, &change).await?;
    tx.commit().await?;
    Ok(hashes)
}

/// NotFound unless the ticket exists for the tenant.
async fn ensure_ticket(db: &Db, tenant: &Tenant, id: Uuid) -> Result<(), StoreError> {
    let _: (Uuid,) = by_id("SELECT t.id FROM tickets t", tenant, id)
        .fetch_one(db)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
