//! Streaming an upload into storage: the body is written chunk by chunk to
//! a temporary object while its size and SHA-256 are counted, so no upload
//! is ever held whole in memory. Crossing the limit stops the copy at once
//! and removes what was written.

use bytes::Bytes;
use futures::{Stream, StreamExt};
use object_store::path::Path;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use super::storage::Storage;

/// Bytes kept from the start of an upload to sniff its type from.
const HEAD: usize = 8 * 1024;

/// A finished upload, still under its temporary key.
#[derive(Debug)]
pub struct Ingested {
    pub temporary: Path,
    pub size: u64,
    pub sha256: String,
    /// The first bytes, for sniffing the type.
    pub head: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    #[error("the upload is larger than {0} bytes")]
    TooLarge(u64),
    #[error("the upload is empty")]
    Empty,
    /// The client's stream broke off (or its multipart framing is wrong).
    #[error("the upload could not be read: {0}")]
    Client(String),
    /// A `multipart/form-data` body went past one of its bounds.
    #[error(transparent)]
    Form(#[from] super::form::FormBound),
    /// A `multipart/form-data` body without a `file` part.
    #[error("the form has no `file` part")]
    NoFilePart,
    #[error("storage failed: {0}")]
    Storage(#[from] std::io::Error),
}

/// A raw body's read failing: the client broke off (or was too slow).
impl From<axum::Error> for IngestError {
    fn from(err: axum::Error) -> Self {
        IngestError::Client(err.to_string())
    }
}

/// Copies `body` to a temporary object, at most `limit` bytes.
pub async fn ingest<S, E>(storage: &Storage, body: S, limit: u64) -> Result<Ingested, IngestError>
where
    S: Stream<Item = Result<Bytes, E>>,
    E: Into<IngestError>,
{
    let (temporary, mut writer) = storage.temporary();
    let copied = copy(&mut writer, body, limit).await;
    match copied {
        Ok((size, sha256, head)) if size > 0 => {
            if let Err(err) = writer.shutdown().await {
                let _ = storage.remove(&temporary).await;
                return Err(IngestError::Storage(err));
            }
            Ok(Ingested {
                temporary,
                size,
                sha256,
                head,
            })
        }
        outcome => {
            // Nothing (or a refused part) was written: drop the staged bytes.
            let _ = writer.abort().await;
            let _ = storage.remove(&temporary).await;
            Err(outcome.err().unwrap_or(IngestError::Empty))
        }
    }
}

async fn copy<S, E>(
    writer: &mut object_store::buffered::BufWriter,
    body: S,
    limit: u64,
) -> Result<(u64, String, Vec<u8>), IngestError>
where
    S: Stream<Item = Result<Bytes, E>>,
    E: Into<IngestError>,
{
    let mut body = std::pin::pin!(body);
    let mut hasher = Sha256::new();
    let mut head = Vec::with_capacity(HEAD);
    let mut size: u64 = 0;
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(Into::into)?;
        size = size.saturating_add(chunk.len() as u64);
        if size > limit {
            return Err(IngestError::TooLarge(limit));
        }
        if head.len() < HEAD {
            let take = (HEAD - head.len()).min(chunk.len());
            head.extend_from_slice(&chunk[..take]);
        }
        hasher.update(&chunk);
        writer.write_all(&chunk).await?;
    }
    Ok((size, hex::encode(hasher.finalize()), head))
}
