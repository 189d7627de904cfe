//! Erasing a person (`POST /contacts/{id}/erase`, run as a job): every
//! area erases its own rows, a batch of the person's tickets or chats per
//! short transaction (so the company's other writes never wait long),
//! each batch with the change-feed tombstones and rating comments of the
//! records it erased; the files' bytes are released after each commit.
//! The last transaction redacts the audit log, tombstones the events that
//! only name the person, drops the queued or sent emails, stored
//! answers and knowledge-base suggestions that name them (a ticket's or
//! chat's suggestions go with its batch), deletes the contact and records the erasure.
//! Then the mail files that name them go, and SQLite's search index is
//! compacted. A contact already erased is a no-op.

use std::path::Path;

use uuid::Uuid;

use crate::attachments::Storage;
use crate::audit::{self, Action, Changes, Target, TargetType};
use crate::auth::Tenant;
use crate::chat::store::erase as chat_erase;
use crate::contacts::model::JobState;
use crate::contacts::store::{erase as contact_erase, jobs};
use crate::csat::store as csat_store;
use crate::db::Db;
use crate::erasure::Person;
use crate::error::StoreError;
use crate::events::erase as event_erase;
use crate::kb::store::{erase_suggestion_mentions, erase_suggestions_of_records};
use crate::outbox;
use crate::tickets::store::erase as ticket_erase;
use crate::time::Clock;

/// Tickets or chats one transaction erases.
pub const BATCH: i64 = 50;

/// What an erasure did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Erased {
    /// False when the contact was already gone (a second erasure).
    pub erased: bool,
    pub tickets: u64,
    pub chats: u64,
    pub audit_entries: u64,
    pub mail_files: u64,
}

/// Where an erasure finds what lies outside the database.
pub struct Places<'a> {
    pub storage: &'a Storage,
    /// `<data dir>/mail`, where the file mailer writes.
    pub mail_dir: &'a Path,
}

/// Erases the tenant's contact `contact`, reporting progress on data
/// request `job` when given.
pub async fn erase(
    db: &Db,
    clock: &Clock,
    places: &Places<'_>,
    tenant: &Tenant,
    contact: Uuid,
    job: Option<Uuid>,
) -> Result<Erased, StoreError> {
    let person = match contact_erase::person(db, tenant, contact).await {
        Ok((_, person)) => person,
        Err(StoreError::NotFound) => return Ok(Erased::default()),
        Err(e) => return Err(e),
    };
    let total = ticket_erase::count_of_contact(db, tenant, contact).await?
        + chat_erase::count_of_contact(db, tenant, contact).await?
        + 1;
    let mut done = Erased {
        erased: true,
        ..Erased::default()
    };
    let mut targets = vec![contact];
    let progress = |done: &Erased| {
        let count = i64::try_from(done.tickets + done.chats).unwrap_or(i64::MAX);
        count.saturating_mul(100) / total
    };
    loop {
        let mut tx = db.begin().await?;
        let batch = ticket_erase::erase_batch(&mut tx, tenant, contact, &person, BATCH).await?;
        if batch.tickets.is_empty() {
            tx.commit().await?;
            break;
        }
        let records: Vec<Uuid> = batch
            .tickets
            .iter()
            .chain(&batch.comments)
            .copied()
            .collect();
        event_erase::tombstone_records(&mut tx, tenant, &records, &person).await?;
        csat_store::erase_comments(&mut tx, tenant, &batch.tickets, &[]).await?;
        erase_suggestions_of_records(&mut tx, tenant, &batch.tickets, &[]).await?;
        tx.commit().await?;
        crate::attachments::sweep::release(db, places.storage, tenant.company_id, &batch.files)
            .await;
        done.tickets += batch.tickets.len() as u64;
        targets.extend(&batch.tickets);
        report(db, clock, job, progress(&done)).await?;
    }
    loop {
        let mut tx = db.begin().await?;
        let batch = chat_erase::erase_batch(&mut tx, tenant, contact, &person, BATCH).await?;
        if batch.sessions.is_empty() {
            tx.commit().await?;
            break;
        }
        let records: Vec<Uuid> = batch
            .sessions
            .iter()
            .chain(&batch.messages)
            .copied()
            .collect();
        event_erase::tombstone_records(&mut tx, tenant, &records, &person).await?;
        csat_store::erase_comments(&mut tx, tenant, &[], &batch.sessions).await?;
        erase_suggestions_of_records(&mut tx, tenant, &[], &batch.sessions).await?;
        tx.commit().await?;
        crate::attachments::sweep::release(db, places.storage, tenant.company_id, &batch.files)
            .await;
        done.chats += batch.sessions.len() as u64;
        targets.extend(&batch.sessions);
        report(db, clock, job, progress(&done)).await?;
    }
    let now = clock.now();
    let mut tx = db.begin().await?;
    let redacted = audit::redact::redact(&mut tx, tenant.company_id, &targets, &person).await?;
    done.audit_entries = redacted.entries;
    event_erase::tombstone_mentions(&mut tx, tenant, &person).await?;
    let jobs_gone = outbox::store::erase_mentions(&mut tx, tenant, &person).await?;
    crate::idempotency::store::erase_mentions(&mut tx, tenant, &person).await?;
    erase_suggestion_mentions(&mut tx, tenant, &person).await?;
    contact_erase::delete(&mut tx, tenant, contact, now).await?;
    let changes = Changes::none()
        .with("tickets", done.tickets.into())
        .with("chats", done.chats.into())
        .with("auditEntriesRedacted", redacted.entries.into());
    let target = Target::new(TargetType::Contact, contact);
    audit::record(
        &mut tx,
        tenant.company_id,
        now,
        Action::ContactErased,
        target,
        changes,
    )
    .await?;
    tx.commit().await?;
    let emails: Vec<Uuid> = jobs_gone
        .into_iter()
        .filter(|(_, kind)| kind == crate::mail::JOB_KIND)
        .map(|(id, _)| id)
        .collect();
    done.mail_files = remove_mail_files(places.mail_dir, &emails, &person).await;
    ticket_erase::compact_search(db).await?;
    chat_erase::compact_search(db).await?;
    db.checkpoint().await?;
    Ok(done)
}

async fn report(db: &Db, clock: &Clock, job: Option<Uuid>, percent: i64) -> Result<(), StoreError> {
    match job {
        Some(job) => jobs::progress(db, job, JobState::Running, percent, clock.now()).await,
        None => Ok(()),
    }
}

/// Removes the mail files of `emails` (the jobs that sent them) and any
/// other file in `dir` that names `person`; answers how many. A file that
/// cannot be read or removed is logged and left.
async fn remove_mail_files(dir: &Path, emails: &[Uuid], person: &Person) -> u64 {
    let mut removed = 0;
    for id in emails {
        if tokio::fs::remove_file(dir.join(format!("{id}.eml")))
            .await
            .is_ok()
        {
            removed += 1;
        }
    }
    // A sent email's job may already be gone (finished jobs are pruned),
    // its file not: read what is left.
    let Ok(mut entries) = tokio::fs::read_dir(dir).await else {
        return removed;
    };
    while let Ok(Some(entry)) = entries.next_entry().await {
        let path = entry.path();
        let Ok(text) = tokio::fs::read(&path).await else {
            continue;
        };
        if person.scrub(&String::from_utf8_lossy(&text)).is_none() {
            continue;
        }
        match tokio::fs::remove_file(&path).await {
            Ok(()) => removed += 1,
            Err(err) => {
                tracing::warn!(error = %err, path = %path.display(), "removing a mail file")
            }
        }
    }
    removed
}
