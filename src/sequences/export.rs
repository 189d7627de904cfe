//! A person's export (`POST /contacts/{id}/export`, run as a job): one zip
//! of everything stored about them, read from each area's store. The zip
//! holds `contact.json` (the records: the schema is in docs/contacts.md)
//! and `files/<attachment id>/<file name>` (the bytes of every file on
//! their tickets and chats). Links inside the records (attachment URLs)
//! are not kept valid: the bytes are in the zip.

use std::io::Write;

use futures::TryStreamExt;
use serde::Serialize;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::attachments::Storage;
use crate::attachments::cleanup::{FileRow, Sent, files_of};
use crate::attachments::links::{Links, Signer};
use crate::audit::list::{Filters, page as audit_page};
use crate::auth::Tenant;
use crate::chat::store as chat_store;
use crate::contacts::store::{self as contact_store, erase::person_of};
use crate::csat::store as csat_store;
use crate::db::Db;
use crate::error::StoreError;
use crate::outbox;
use crate::tickets::store as ticket_store;
use crate::time::Clock;
use crate::validate::Page;

/// The export format's name and version, the first fields of
/// `contact.json`.
pub const FORMAT: &str = "supportdesk.contact-export";
pub const VERSION: i64 = 1;

/// Records of one kind an export reads at most (a contact's tickets, a
/// ticket's comments, audit entries per record).
const MOST: i64 = 100_000;

/// The zip of the tenant's contact `contact`, reporting progress on data
/// request `job` when given.
pub async fn archive(
    db: &Db,
    clock: &Clock,
    storage: &Storage,
    tenant: &Tenant,
    contact: Uuid,
    job: Option<Uuid>,
) -> Result<Vec<u8>, StoreError> {
    let (document, files) = document(db, clock, tenant, contact, job).await?;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let text = serde_json::to_vec_pretty(&document)?;
    put(&mut zip, "contact.json", options, &text)?;
    for file in &files {
        let key = Storage::object_key(tenant.company_id, &file.sha256);
        let bytes = read_all(storage, &key).await?;
        let name = format!("files/{}/{}", file.id, file.filename);
        put(&mut zip, &name, options, &bytes)?;
    }
    let cursor = zip.finish().map_err(zip_error)?;
    Ok(cursor.into_inner())
}

fn put(
    zip: &mut zip::ZipWriter<std::io::Cursor<Vec<u8>>>,
    name: &str,
    options: zip::write::SimpleFileOptions,
    bytes: &[u8],
) -> Result<(), StoreError> {
    zip.start_file(name, options).map_err(zip_error)?;
    zip.write_all(bytes).map_err(|e| zip_error(e.into()))
}

fn zip_error(err: zip::result::ZipError) -> StoreError {
    StoreError::Unavailable(format!("writing the export: {err}"))
}

async fn read_all(
    storage: &Storage,
    key: &object_store::path::Path,
) -> Result<Vec<u8>, StoreError> {
    let unavailable = |e: String| StoreError::Unavailable(format!("reading a file: {e}"));
    let download = storage
        .read(key, None)
        .await
        .map_err(|e| unavailable(e.to_string()))?;
    let chunks: Vec<bytes::Bytes> = download
        .body
        .try_collect()
        .await
        .map_err(|e| unavailable(e.to_string()))?;
    Ok(chunks.concat())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TicketRecord {
    ticket: crate::tickets::Ticket,
    comments: Vec<crate::tickets::model::Comment>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ChatRecord {
    session: crate::chat::Session,
    messages: Vec<crate::chat::Message>,
}

/// `contact.json` and the files to put beside it.
async fn document(
    db: &Db,
    clock: &Clock,
    tenant: &Tenant,
    contact: Uuid,
    job: Option<Uuid>,
) -> Result<(Value, Vec<FileRow>), StoreError> {
    let now = clock.now();
    // Links signed with no secret: no service opens them (see above).
    let signer = Signer::new(Links::new([0; 32], "".into()), now);
    let person = contact_store::find(db, tenant, contact).await?;
    let mut tickets = Vec::new();
    let mut comment_ids = Vec::new();
    let ticket_ids: Vec<Uuid> = ticket_store::of_contacts(db, tenant, &[contact], MOST)
        .await?
        .into_iter()
        .map(|summary| summary.id)
        .collect();
    let session_ids: Vec<Uuid> = chat_store::of_contacts(db, tenant, &[contact], MOST)
        .await?
        .into_iter()
        .map(|summary| summary.id)
        .collect();
    // Percent done: each ticket and chat read is a step, the files the last.
    let steps = i64::try_from(ticket_ids.len() + session_ids.len()).unwrap_or(i64::MAX) + 1;
    let mut step = 0;
    for id in &ticket_ids {
        step += 1;
        report(db, clock, job, step * 100 / steps).await?;
        let ticket = ticket_store::find(db, tenant, *id, &signer).await?;
        let page = Page {
            limit: MOST,
            offset: 0,
        };
        let (comments, _) =
            ticket_store::list_comments(db, tenant, *id, true, page, None, &signer).await?;
        comment_ids.extend(comments.iter().map(|comment| comment.id));
        tickets.push(TicketRecord { ticket, comments });
    }
    let mut chats = Vec::new();
    let mut message_ids = Vec::new();
    for id in &session_ids {
        step += 1;
        report(db, clock, job, step * 100 / steps).await?;
        let session = chat_store::find_session(db, tenant, *id).await?;
        let messages = chat_store::messages(db, tenant, *id, &signer).await?;
        message_ids.extend(messages.iter().map(|message| message.id));
        chats.push(ChatRecord { session, messages });
    }
    let ratings = csat_store::of_records(db, tenant, &ticket_ids, &session_ids).await?;
    let sent = Sent {
        tickets: &ticket_ids,
        comments: &comment_ids,
        messages: &message_ids,
        sessions: &session_ids,
    };
    let files = files_of(db, tenant, &sent).await?;
    let emails = emails_to(db, tenant, &person.emails, &person_of(&person)).await?;
    let mut audit_entries = Vec::new();
    for target in std::iter::once(&contact)
        .chain(&ticket_ids)
        .chain(&session_ids)
    {
        let filters = Filters {
            target_id: Some(*target),
            ..Filters::default()
        };
        audit_entries.extend(audit_page(db, tenant.company_id, &filters, None, MOST, 0).await?);
    }
    audit_entries.sort_by_key(|entry| (entry.at, entry.id));
    let files_listed: Vec<Value> = files
        .iter()
        .map(|file| {
            let mut listed = serde_json::to_value(file).unwrap_or(Value::Null);
            listed["path"] = json!(format!("files/{}/{}", file.id, file.filename));
            listed
        })
        .collect();
    let document = json!({
        "format": FORMAT,
        "version": VERSION,
        "exportedAt": now,
        "contact": person,
        "tickets": tickets,
        "chats": chats,
        "ratings": ratings,
        "emails": emails,
        "files": files_listed,
        "auditEntries": audit_entries,
    });
    Ok((document, files))
}

async fn report(db: &Db, clock: &Clock, job: Option<Uuid>, percent: i64) -> Result<(), StoreError> {
    match job {
        Some(job) => {
            let state = crate::contacts::model::JobState::Running;
            crate::contacts::store::jobs::progress(db, job, state, percent, clock.now()).await
        }
        None => Ok(()),
    }
}

/// The emails queued or sent to `addresses` (those the outbox still
/// holds: sent ones are pruned after the job retention).
async fn emails_to(
    db: &Db,
    tenant: &Tenant,
    addresses: &[String],
    person: &crate::erasure::Person,
) -> Result<Vec<Value>, StoreError> {
    let jobs = outbox::store::mentioning(db, tenant, crate::mail::JOB_KIND, person).await?;
    Ok(jobs
        .into_iter()
        .filter_map(|(id, payload, status)| {
            let email: crate::mail::Email = serde_json::from_value(payload.0).ok()?;
            let to = email.to.to_lowercase();
            addresses.contains(&to).then(|| {
                json!({
                    "id": id,
                    "state": status,
                    "to": email.to,
                    "subject": email.subject,
                    "text": email.text,
                    "html": email.html,
                })
            })
        })
        .collect())
}
