//! An incoming message's files: written to storage under temporary keys
//! before its transaction (no file is held in a transaction), recorded in
//! it, and put under their final keys after it commits, as an upload is
//! (row first, then the bytes: a sweeper that saw no row for these bytes
//! has finished before they are put back). And the message's text, as
//! the comment holds it with the names of the files refused.

use bytes::Bytes;
use object_store::path::Path;
use uuid::Uuid;

use crate::attachments::ingest::{IngestError, ingest};
use crate::attachments::model;
use crate::attachments::store::{self as attachment_store, NewAttachment};
use crate::attachments::{Attachments, Storage};
use crate::auth::Tenant;
use crate::db::Tx;
use crate::email::parse::Parsed;
use crate::email::trim;
use crate::error::StoreError;
use crate::tickets::model::COMMENT_MAX;
use crate::time::Timestamp;

/// A file written under a temporary key, not yet recorded.
pub struct Staged {
    temporary: Path,
    new: NewAttachment,
}

/// Files staged for one message, and the names of those refused (too
/// large), which the comment mentions.
#[derive(Default)]
pub struct StagedFiles {
    pub files: Vec<Staged>,
    pub refused: Vec<String>,
}

impl StagedFiles {
    /// Writes `bytes` as `filename` under a temporary key; a file past the
    /// attachments' limit is named in `refused` instead.
    pub async fn stage(
        &mut self,
        attachments: &Attachments,
        filename: &str,
        claimed_type: &str,
        bytes: Vec<u8>,
    ) -> Result<(), StoreError> {
        let filename = model::sanitize_filename(filename);
        let body =
            futures::stream::once(async move { Ok::<_, std::io::Error>(Bytes::from(bytes)) });
        match ingest(&attachments.storage, body, attachments.max_bytes).await {
            Ok(ingested) => {
                self.files.push(Staged {
                    new: NewAttachment {
                        filename,
                        content_type: model::content_type(&ingested.head, Some(claimed_type)),
                        size: i64::try_from(ingested.size).unwrap_or(i64::MAX),
                        sha256: ingested.sha256,
                        session_id: None,
                    },
                    temporary: ingested.temporary,
                });
                Ok(())
            }
            Err(IngestError::TooLarge(_)) => {
                self.refused.push(filename);
                Ok(())
            }
            // An empty part carries nothing to keep.
            Err(IngestError::Empty) => Ok(()),
            Err(err) => Err(StoreError::Unavailable(format!(
                "storing a mail part: {err}"
            ))),
        }
    }

    /// Records every staged file in `tx`; their ids.
    pub async fn record(
        &self,
        tx: &mut Tx,
        tenant: &Tenant,
        now: Timestamp,
    ) -> Result<Vec<Uuid>, StoreError> {
        let mut ids = Vec::with_capacity(self.files.len());
        for file in &self.files {
            let stored = attachment_store::create_in(tx, tenant, file.new.clone(), now).await?;
            ids.push(stored.id);
        }
        Ok(ids)
    }

    /// After the commit: every file under its final key.
    pub async fn publish(self, storage: &Storage, tenant: &Tenant) {
        for file in self.files {
            let key = Storage::object_key(tenant.company_id, &file.new.sha256);
            if let Err(err) = storage.publish(&file.temporary, &key).await {
                tracing::error!(error = %err, "storing a mail attachment failed");
                let _ = storage.remove(&file.temporary).await;
            }
        }
    }

    /// Nothing was recorded (a duplicate, a refused message): the staged
    /// bytes go.
    pub async fn discard(self, storage: &Storage) {
        for file in self.files {
            let _ = storage.remove(&file.temporary).await;
        }
    }
}

/// Stages the message's files, and the raw message itself when the
/// comment does not hold it whole (history trimmed, malformed).
pub(super) async fn stage(
    attachments: &Attachments,
    parsed: &Parsed,
    raw: &[u8],
    staged: &mut StagedFiles,
) -> Result<(), StoreError> {
    for part in &parsed.parts {
        staged
            .stage(
                attachments,
                &part.filename,
                &part.content_type,
                part.bytes.clone(),
            )
            .await?;
    }
    let full = full_text(parsed);
    if parsed.malformed || trim::new_part(&full) != full.trim_end() {
        staged
            .stage(attachments, "original.eml", "message/rfc822", raw.to_vec())
            .await?;
    }
    Ok(())
}

/// The message's text: its plain part, else its HTML without tags.
pub(super) fn full_text(parsed: &Parsed) -> String {
    match (&parsed.text, &parsed.html) {
        (Some(text), _) => text.clone(),
        (None, Some(html)) => crate::email::sanitize::text_of(html),
        (None, None) => String::new(),
    }
}

/// The comment's text: the new part of the message (history and signature
/// cut), within a comment's limit, and the files that were too large.
pub(super) fn comment_body(parsed: &Parsed, refused: &[String]) -> String {
    let mut body = trim::new_part(&full_text(parsed));
    if body.trim().is_empty() {
        body = "(no text)".to_string();
    }
    if parsed.malformed {
        body =
            format!("(This message could not be read whole: the original is attached.)\n\n{body}");
    }
    for name in refused {
        body.push_str(&format!("\n\n[{name} was too large to keep]"));
    }
    body.chars().take(COMMENT_MAX).collect()
}
