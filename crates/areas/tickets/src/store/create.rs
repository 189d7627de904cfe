//! Creating a ticket: its number, its row, tags, fields, attachments and
//! SLA clocks, its `created` timeline entry and `ticket.created`.

use serde_json::json;
use uuid::Uuid;

use super::activities::{NewActivity, add_activity};
use super::contacts::ContactOf;
use super::numbering::{Numbering, RESERVED_NUMBER, begin_numbered, next_number};
use super::plain;
use super::queued::JobsOf;
use super::read::load;
use super::sla::record_sla;
use super::subscribers::Subscribers;
use super::ticket_person::{chat_visitor, person_of};
use super::written::written;
use crate::attachments::links::Signer;
use crate::attachments::store::{self as attachment_store, Owner};
use crate::auth::Tenant;
use crate::custom_fields::store::{self as field_store, Recorded};
use crate::db::{Backend, Db, Query, Table, Tx, ensure_reference};
use crate::error::StoreError;
use crate::events;
use crate::model::{ActivityKind, NewTicket, Ticket, TicketStatus, ticket_number};
use crate::sla::cache::{self as sla_cache, SlaCache};
use crate::sla::clocks::store::{self as sla_store, NewTicketFacts, Opening};
use crate::tags::store::{self as tag_store, Tagged};
use crate::teams::store as team_store;
use crate::time::{Timestamp, new_id};

/// Creates a ticket (OPEN) with the next number of the tenant, its
/// `created` timeline entry, `ticket.created` and the visitor's email.
/// `now` is the node's clock (`AppState::clock`): the SLA clocks start at
/// the creation time, and a test's fake clock must move them.
///
/// The SLA policy is chosen from the tenant's cached rules and the facts
/// given here, before the row is written, so choosing it reads nothing.
///
/// The ticket's contact comes from `contacts`, in the ticket's
/// transaction: its chat's contact when it is made from one, else the one
/// its visitor (email, verified identity) matches. The jobs it queues
/// (`jobs`) are written with it.
#[allow(clippy::too_many_arguments)] // the create's handles, and its steps
pub async fn create(
    db: &Db,
    sla: &SlaCache,
    subscribers: &Subscribers,
    tenant: &Tenant,
    new: NewTicket,
    now: Timestamp,
    signer: &Signer,
    (contacts, jobs): (&dyn ContactOf, Option<&dyn JobsOf>),
) -> Result<Ticket, StoreError> {
    let mut prepared = Prepared::decide(db, sla, tenant, &new, now, jobs).await?;
    let facts = facts_of(&new, now);
    // Only the row and its tags are written: the ticket is what was
    // written, with no read back (a round trip less). Field values,
    // attachments and SLA clocks are read back as stored.
    let row_and_tags_only = new.custom_fields.is_empty() && new.attachment_ids.is_empty();
    prepared.as_written = row_and_tags_only && matches!(prepared.opening, Opening::Nothing);
    // The row alone, its number reserved beforehand: one statement (see
    // `plain`).
    let plain = row_and_tags_only && new.tags.is_empty() && db.backend() == Backend::Postgres;
    prepared.clocks = plain
        .then(|| sla_store::started_without_reading(prepared.id, &prepared.opening, &facts))
        .flatten();
    // ... which commits by itself when nothing else is written: no
    // reference to check first, no email, no request bookkeeping.
    let alone = prepared.clocks.is_some()
        && new.team_id.is_none()
        && new.chat_session_id.is_none()
        && new.visitor_email.is_none()
        && !db.has_commit_hook()
        && !subscribers.seen(tenant);
    let (mut tx, numbering) = begin_numbered(db, tenant, alone).await?;
    prepared.numbering = numbering;
    let ticket = write(
        &mut tx,
        subscribers,
        tenant,
        new,
        prepared,
        now,
        signer,
        contacts,
    )
    .await?;
    tx.commit().await?;
    Ok(ticket)
}

/// `create`'s step inside a transaction of the caller's (an incoming
/// email opens its ticket beside its message's other rows): the number is
/// taken in the transaction, and the ticket is read back as stored.
#[allow(clippy::too_many_arguments)] // the create's handles, and its steps
pub async fn create_in(
    tx: &mut Tx,
    db: &Db,
    sla: &SlaCache,
    subscribers: &Subscribers,
    tenant: &Tenant,
    new: NewTicket,
    now: Timestamp,
    signer: &Signer,
    (contacts, jobs): (&dyn ContactOf, Option<&dyn JobsOf>),
) -> Result<Ticket, StoreError> {
    let prepared = Prepared::decide(db, sla, tenant, &new, now, jobs).await?;
    write(
        tx,
        subscribers,
        tenant,
        new,
        prepared,
        now,
        signer,
        contacts,
    )
    .await
}

/// What a create decided before its transaction.
struct Prepared {
    id: Uuid,
    rules: std::sync::Arc<sla_cache::Rules>,
    opening: Opening,
    clocks: Option<Vec<crate::sla::clocks::Clock>>,
    as_written: bool,
    numbering: Numbering,
    jobs: Option<crate::db::NewRows>,
}

impl Prepared {
    /// What every create decides: the ticket's id, the SLA policy that
    /// opens (from the tenant's cached rules, so choosing reads nothing)
    /// and the jobs it queues; a ticket read back as stored, its number
    /// taken in its transaction, until the create decides otherwise.
    async fn decide(
        db: &Db,
        sla: &SlaCache,
        tenant: &Tenant,
        new: &NewTicket,
        now: Timestamp,
        jobs: Option<&dyn JobsOf>,
    ) -> Result<Prepared, StoreError> {
        let rules = sla_cache::rules(sla, db, tenant).await?;
        let opening = if rules.any_enabled() {
            sla_store::opening(&rules, &facts_of(new, now))
        } else {
            Opening::Nothing
        };
        let id = new_id();
        let jobs = jobs
            .map(|jobs| jobs.jobs(db.backend(), tenant, id, new))
            .transpose()?
            .flatten();
        Ok(Prepared {
            id,
            rules,
            opening,
            clocks: None,
            as_written: false,
            numbering: Numbering::InTransaction,
            jobs,
        })
    }
}

fn facts_of(new: &NewTicket, now: Timestamp) -> NewTicketFacts<'_> {
    NewTicketFacts {
        priority: new.priority,
        entity_id: new.entity_id,
        team_id: new.team_id,
        tags: &new.tags,
        chat_session_id: new.chat_session_id,
        created_at: now,
    }
}

/// The ticket's rows, in `tx`.
#[allow(clippy::too_many_arguments)] // the create's handles, and its contact's step
async fn write(
    tx: &mut Tx,
    subscribers: &Subscribers,
    tenant: &Tenant,
    new: NewTicket,
    prepared: Prepared,
    now: Timestamp,
    signer: &Signer,
    contacts: &dyn ContactOf,
) -> Result<Ticket, StoreError> {
    let Prepared {
        id,
        rules,
        opening,
        clocks,
        as_written,
        numbering,
        jobs,
    } = prepared;
    let facts = facts_of(&new, now);
    // The insert below checks the entity itself (a round trip less). With a
    // team or a chat to check as well, the entity is checked first, so a
    // request naming a wrong entity hears of the entity first.
    if new.team_id.is_some() || new.chat_session_id.is_some() {
        ensure_reference(
            &mut *tx,
            tenant.company_id,
            Table::Entities,
            new.entity_id,
            "entityId",
        )
        .await?;
    }
    if let Some(team) = new.team_id {
        team_store::ensure_team(&mut *tx, tenant, team, "teamId").await?;
    }
    let from_chat = match new.chat_session_id {
        Some(session) => Some(chat_visitor(&mut *tx, tenant, session).await?),
        None => None,
    };
    let contact_id = match from_chat.as_ref().and_then(|chat| chat.contact_id) {
        Some(contact) => Some(contact),
        None => {
            let person = person_of(new.visitor_email.as_deref(), from_chat.as_ref());
            match person.is_unknown() {
                true => None,
                false => contacts.contact(&mut *tx, &person).await?,
            }
        }
    };
    // The new ticket is the creator's to see in the answer, whichever team
    // (or none) it is in; later reads follow the tenant's team limit.
    let tenant = &tenant.whole();
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
            Some(ticket_number(next_number(&mut *tx, tenant).await?)),
        ),
    };
    // Inserts nothing when the entity is not one of the company's.
    let insert = Query::new(format!(
        "INSERT INTO tickets (id, company_id, mode, entity_id, ticket_number, subject, \
         description, status, priority, visitor_email, team_id, created_at, updated_at, \
         chat_session_id, visitor_external_id, visitor_name, visitor_verified, sla_policy_id, \
         contact_id, channel) \
         SELECT $1, $2, $3, $4, {number_sql}, $6, $7, $8, $9, $10, $11, $12, $12, $13, $14, $15, \
         $16, $17, $18, $19 FROM entities e WHERE e.id = $4 AND e.company_id = $2"
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
    .bind(opening.policy_id())
    .bind(contact_id)
    .bind(new.channel);
    let entry = NewActivity {
        to: Some(TicketStatus::Open.to_string()),
        details: Some(json!({"priority": new.priority, "tags": new.tags,
            "customFields": new.custom_fields, "teamId": new.team_id})),
        ..NewActivity::new(ActivityKind::Created)
    };
    if let Some(clocks) = clocks {
        let mut ticket = written(id, String::new(), new, visitor_email, from_chat, &[], now);
        ticket.sla = sla_store::sla_of(opening.policy_id(), &clocks);
        ticket.contact_id = contact_id;
        let alongside = plain::Alongside {
            clocks: &clocks,
            entry,
            jobs,
        };
        return plain::insert(
            &mut *tx,
            subscribers,
            tenant,
            insert,
            alongside,
            ticket,
            now,
        )
        .await;
    }
    let insert = insert.push(" RETURNING ticket_number");
    let inserted: Option<(String,)> = insert.fetch_optional(&mut *tx).await?;
    let Some((number,)) = inserted else {
        return Err(Table::Entities.invalid_reference("entityId"));
    };
    if let Some(jobs) = jobs {
        jobs.insert().execute(&mut *tx).await?;
    }
    let tags = tag_store::add_to_new(&mut *tx, tenant, Tagged::Ticket, id, &new.tags).await?;
    field_store::apply(&mut *tx, tenant, Recorded::Ticket, id, &new.custom_fields).await?;
    let owner = Owner::Ticket(id);
    attachment_store::attach(
        &mut *tx,
        tenant,
        owner,
        &new.attachment_ids,
        "attachmentIds",
    )
    .await?;
    // After the fields: a custom field condition reads them.
    let met = sla_store::start(&mut *tx, tenant, id, &rules, &facts, opening).await?;
    let entry = NewActivity {
        details: entry.details.map(|mut details| {
            details["ticketNumber"] = json!(number);
            details
        }),
        ..entry
    };
    add_activity(&mut *tx, tenant, id, entry, now).await?;
    let ticket = if as_written {
        Ticket {
            contact_id,
            ..written(id, number, new, visitor_email, from_chat, &tags, now)
        }
    } else {
        load(&mut *tx, tenant, id, signer).await?
    };
    events::created(&mut *tx, tenant, &ticket, now).await?;
    if !met.is_empty() {
        record_sla(&mut *tx, tenant, id, &met, signer, now).await?;
    }
    Ok(ticket)
}
