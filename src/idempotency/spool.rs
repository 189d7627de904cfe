//! A keyed request's body, read whole before its handler runs: its hash is
//! part of the key's record, and the handler then reads the same bytes.
//! Up to the service's body limit it is held in memory; past it (an upload
//! may be 25 MiB) it goes to an unnamed temporary file in the data dir,
//! which the system removes once the handler has dropped the body.

use std::path::Path;

use axum::body::Body;
use bytes::BytesMut;
use futures::StreamExt;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncSeekExt, AsyncWriteExt};

/// A body read whole: its SHA-256 (hex) and the bytes, replayable once.
pub struct Spooled {
    pub fingerprint: String,
    pub body: Body,
}

#[derive(Debug, thiserror::Error)]
pub enum SpoolError {
    #[error("the body is larger than {0} bytes")]
    TooLarge(u64),
    /// The client's body broke off.
    #[error("the body could not be read: {0}")]
    Client(axum::Error),
    #[error("the body could not be spooled: {0}")]
    Io(#[from] std::io::Error),
}

/// Reads `body`, at most `limit` bytes: in memory up to `in_memory`, past
/// that in a temporary file in `dir`.
pub async fn spool(
    body: Body,
    limit: u64,
    in_memory: usize,
    dir: &Path,
) -> Result<Spooled, SpoolError> {
    let mut stream = body.into_data_stream();
    let mut hasher = Sha256::new();
    let mut size: u64 = 0;
    let mut memory = BytesMut::new();
    let mut file: Option<tokio::fs::File> = None;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(SpoolError::Client)?;
        size = size.saturating_add(chunk.len() as u64);
        if size > limit {
            return Err(SpoolError::TooLarge(limit));
        }
        hasher.update(&chunk);
        if let Some(file) = file.as_mut() {
            file.write_all(&chunk).await?;
        } else if memory.len() + chunk.len() <= in_memory {
            memory.extend_from_slice(&chunk);
        } else {
            let mut spilled = temporary_file(dir).await?;
            spilled.write_all(&memory).await?;
            spilled.write_all(&chunk).await?;
            memory = BytesMut::new();
            file = Some(spilled);
        }
    }
    let fingerprint = hex::encode(hasher.finalize());
    let body = match file {
        None => Body::from(memory.freeze()),
        Some(mut file) => {
            file.flush().await?;
            file.rewind().await?;
            Body::from_stream(tokio_util::io::ReaderStream::new(file))
        }
    };
    Ok(Spooled { fingerprint, body })
}

/// An unnamed file in `dir`: nothing to clean up, even after a crash.
async fn temporary_file(dir: &Path) -> std::io::Result<tokio::fs::File> {
    let dir = dir.to_path_buf();
    let file = tokio::task::spawn_blocking(move || tempfile::tempfile_in(dir))
        .await
        .map_err(std::io::Error::other)??;
    Ok(tokio::fs::File::from_std(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read(body: Body) -> Vec<u8> {
        axum::body::to_bytes(body, usize::MAX)
            .await
            .expect("body")
            .to_vec()
    }

    fn chunked(chunks: Vec<Vec<u8>>) -> Body {
        let stream = futures::stream::iter(chunks)
            .map(|chunk| Ok::<_, std::io::Error>(bytes::Bytes::from(chunk)));
        Body::from_stream(stream)
    }

    #[tokio::test]
    async fn a_body_past_memory_is_replayed_from_the_file_with_the_same_hash() {
        let dir = tempfile::tempdir().expect("dir");
        let chunks: Vec<Vec<u8>> = (0u8..10).map(|n| vec![n; 1000]).collect();
        let whole: Vec<u8> = chunks.concat();
        let spooled = spool(chunked(chunks), 20_000, 2_500, dir.path())
            .await
            .expect("spooled");
        assert_eq!(spooled.fingerprint, hex::encode(Sha256::digest(&whole)));
        assert_eq!(read(spooled.body).await, whole);
    }

    #[tokio::test]
    async fn a_body_past_the_limit_is_refused() {
        let dir = tempfile::tempdir().expect("dir");
        let chunks = vec![vec![1u8; 600], vec![2u8; 600]];
        let refused = spool(chunked(chunks), 1_000, 100, dir.path()).await;
        assert!(matches!(refused, Err(SpoolError::TooLarge(1_000))));
    }
}
