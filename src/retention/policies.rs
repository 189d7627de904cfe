//! Each company's own data retention (`dataRetention` in `/settings`):
//! CLOSED tickets past their days since their last change, closed chats
//! past their days since they closed, and contacts with no ticket and no
//! chat left past their days since their last change. Run by the retention
//! pass after the service-wide targets; `preview` counts, with the same
//! conditions, what a pass at a given moment deletes (the dry run).
//!
//! Tickets go a batch per transaction through the tickets area's own
//! delete (comments, timeline, change-feed deletes, an audit entry each
//! whose reason is `retention`), their files' bytes released after; chats as the service-wide chat retention deletes
//! them; contacts after the tickets and chats, so a contact whose last
//! ticket goes in this pass is counted and deleted in the same pass only
//! when the contact itself is also past its days.

use serde::Serialize;
use uuid::Uuid;

use super::TableReport;
use super::{before, chats, store};
use crate::attachments::{Attachments, Storage};
use crate::auth::{Mode, Tenant};
use crate::db::{Db, Query};
use crate::error::StoreError;
use crate::settings::retention::DataRetention;
use crate::tickets::store::Deletion;
use crate::time::Timestamp;

/// Most tickets or contacts one read of the pass takes.
const BATCH: i64 = 100;

/// What a pass at one moment deletes of one company (the dry run's
/// answer).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Preview {
    pub closed_tickets: u64,
    pub closed_chats: u64,
    /// Contacts with nothing left once the tickets and chats above are
    /// gone.
    pub contacts: u64,
}

/// The cut-off `days` before `now`.
fn cutoff(days: u32, now: Timestamp) -> Timestamp {
    before(
        now,
        std::time::Duration::from_secs(u64::from(days) * 86_400),
    )
}

/// A CLOSED ticket whose last change is before the cut-off (the first
/// placeholder); the company is the second.
const OLD_CLOSED_TICKET: &str = "status = 'CLOSED' AND updated_at < $1 AND company_id = $2";

/// A contact changed before the contact cut-off ($1) of company $2 with
/// no ticket and no chat, once the tickets closed before $3 and the chats
/// closed before $4 are gone (a far past cut-off where that kind is kept).
const CONTACT_LEFT: &str = "c.updated_at < $1 AND c.company_id = $2 \
     AND NOT EXISTS (SELECT 1 FROM tickets t WHERE t.contact_id = c.id \
         AND NOT (t.status = 'CLOSED' AND t.updated_at < $3)) \
     AND NOT EXISTS (SELECT 1 FROM chat_sessions s WHERE s.contact_id = c.id \
         AND NOT (s.status = 'CLOSED' AND s.closed_at < $4))";

/// The cut-offs of a policy at `now`; a kept kind gets the earliest time,
/// which nothing is before.
struct Cutoffs {
    tickets: Option<Timestamp>,
    chats: Option<Timestamp>,
    contacts: Option<Timestamp>,
}

impl Cutoffs {
    fn of(policy: &DataRetention, now: Timestamp) -> Cutoffs {
        Cutoffs {
            tickets: policy.closed_tickets_days.map(|days| cutoff(days, now)),
            chats: policy.closed_chats_days.map(|days| cutoff(days, now)),
            contacts: policy.contacts_days.map(|days| cutoff(days, now)),
        }
    }

    fn contact_query(&self, select: &str, contacts: Timestamp, company: Uuid) -> Query {
        let never = Timestamp::from_datetime(chrono::DateTime::<chrono::Utc>::MIN_UTC);
        Query::new(format!("{select} FROM contacts c WHERE {CONTACT_LEFT}"))
            .bind(contacts)
            .bind(company)
            .bind(self.tickets.unwrap_or(never))
            .bind(self.chats.unwrap_or(never))
    }
}

/// What a pass at `now` deletes of `company` under `policy`.
pub async fn preview(
    db: &Db,
    company: Uuid,
    policy: &DataRetention,
    now: Timestamp,
) -> Result<Preview, StoreError> {
    let cutoffs = Cutoffs::of(policy, now);
    let mut preview = Preview::default();
    if let Some(tickets) = cutoffs.tickets {
        let count: i64 = Query::new(format!(
            "SELECT count(*) FROM tickets WHERE {OLD_CLOSED_TICKET}"
        ))
        .bind(tickets)
        .bind(company)
        .fetch_scalar(db)
        .await?;
        preview.closed_tickets = u64::try_from(count).unwrap_or(0);
    }
    if let Some(chats) = cutoffs.chats {
        preview.closed_chats = store::count_closed_sessions(db, company, chats).await?;
    }
    if let Some(contacts) = cutoffs.contacts {
        let count: i64 = cutoffs
            .contact_query("SELECT count(*)", contacts, company)
            .fetch_scalar(db)
            .await?;
        preview.contacts = u64::try_from(count).unwrap_or(0);
    }
    Ok(preview)
}

/// Deletes what every company's policy says is past its days at `now`;
/// one report per kind of record, summed over the companies.
pub async fn purge(
    db: &Db,
    attachments: &Attachments,
    now: Timestamp,
) -> Result<Vec<TableReport>, StoreError> {
    let mut tickets = report("tickets");
    let mut chats = report("chat_sessions (company retention)");
    let mut contacts = report("contacts");
    for (company, policy) in crate::settings::store::data_retentions(db).await? {
        let cutoffs = Cutoffs::of(&policy, now);
        if let Some(cutoff) = cutoffs.tickets {
            let storage = &attachments.storage;
            purge_tickets(db, storage, company, cutoff, now, &mut tickets).await?;
        }
        if let Some(cutoff) = cutoffs.chats {
            let done = chats::purge(db, attachments, Some(company), cutoff, now).await?;
            add(&mut chats, done.rows_deleted);
        }
        if let Some(cutoff) = cutoffs.contacts {
            purge_contacts(db, &cutoffs, company, cutoff, &mut contacts).await?;
        }
    }
    Ok(vec![tickets, chats, contacts])
}

fn report(table: &'static str) -> TableReport {
    TableReport {
        table,
        ..TableReport::default()
    }
}

fn add(report: &mut TableReport, deleted: u64) {
    if deleted > 0 {
        report.rows_deleted += deleted;
        report.batches += 1;
        report.largest_batch = report.largest_batch.max(deleted);
    }
}

async fn purge_tickets(
    db: &Db,
    storage: &Storage,
    company: Uuid,
    cutoff: Timestamp,
    now: Timestamp,
    report: &mut TableReport,
) -> Result<(), StoreError> {
    loop {
        let old: Vec<(Uuid, String)> = Query::new(format!(
            "SELECT id, mode FROM tickets WHERE {OLD_CLOSED_TICKET} ORDER BY updated_at, id LIMIT $3"
        ))
        .bind(cutoff)
        .bind(company)
        .bind(BATCH)
        .fetch_all(db)
        .await?;
        // A mode no longer known is left alone.
        let batch: Vec<(Tenant, Uuid)> = old
            .iter()
            .filter_map(|(id, mode)| {
                Some((Tenant::new(company, Mode::from_stored(mode).ok()?), *id))
            })
            .collect();
        let why = Deletion::Retention;
        let done = crate::tickets::store::delete_batch(db, &batch, why, now).await?;
        crate::attachments::sweep::release(db, storage, company, &done.files).await;
        let deleted = done.tickets;
        add(report, deleted);
        if (old.len() as i64) < BATCH {
            return Ok(());
        }
    }
}

async fn purge_contacts(
    db: &Db,
    cutoffs: &Cutoffs,
    company: Uuid,
    cutoff: Timestamp,
    report: &mut TableReport,
) -> Result<(), StoreError> {
    loop {
        let ids: Vec<Uuid> = cutoffs
            .contact_query("SELECT c.id", cutoff, company)
            .push(" ORDER BY c.updated_at, c.id LIMIT $5")
            .bind(BATCH)
            .fetch_column(db)
            .await?;
        if ids.is_empty() {
            return Ok(());
        }
        let deleted = Query::new("DELETE FROM contacts WHERE company_id = ")
            .push_bind(company)
            .push(" AND id IN ")
            .push_bind_list(ids.iter().copied())
            .rows_affected(db)
            .await?;
        add(report, deleted);
        // A batch none of which could go (deleted meanwhile) ends the
        // pass rather than reading the same rows again.
        if deleted == 0 || (ids.len() as i64) < BATCH {
            return Ok(());
        }
    }
}
