//! Where attachment bytes live: an `object_store` store, either the local
//! filesystem under `<data dir>/attachments/` or an S3-compatible bucket
//! that several nodes share. Everything else talks to this wrapper only.
//! Keys: `<company>/<sha256>` for stored bytes (one object per company and
//! content), `tmp/<uuid>` while an upload streams in.

use std::path::Path as FsPath;
use std::sync::Arc;

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use object_store::aws::AmazonS3Builder;
use object_store::buffered::BufWriter;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt};
use uuid::Uuid;

/// Bytes an upload to disk buffers before each write: small, so many
/// parallel uploads cost little memory.
const LOCAL_WRITE_CHUNK: usize = 256 * 1024;

/// Bytes an upload to S3 buffers per part: S3 refuses multipart parts
/// smaller than 5 MiB (all but the last), so this is the least it can be.
const S3_WRITE_CHUNK: usize = 5 * 1024 * 1024;

#[derive(Clone, Debug)]
pub struct Storage {
    store: Arc<dyn ObjectStore>,
    write_chunk: usize,
}

/// A stored object's bytes, or the part of them a range asked for.
pub struct Download {
    pub body: BoxStream<'static, std::io::Result<Bytes>>,
}

impl Storage {
    /// The local filesystem under `<data_dir>/attachments/` (created).
    pub fn local(data_dir: &FsPath) -> anyhow::Result<Storage> {
        let root = data_dir.join("attachments");
        std::fs::create_dir_all(&root)?;
        let store = LocalFileSystem::new_with_prefix(root)?;
        Ok(Storage {
            store: Arc::new(store),
            write_chunk: LOCAL_WRITE_CHUNK,
        })
    }

    /// A bucket of an S3-compatible service. What `config` leaves out comes
    /// from the `AWS_*` environment variables, as the AWS tools read them.
    pub fn s3(config: &S3Config) -> anyhow::Result<Storage> {
        let mut builder = AmazonS3Builder::from_env().with_bucket_name(&config.bucket);
        if let Some(endpoint) = &config.endpoint {
            // A plain-HTTP endpoint is a local or private server the
            // operator named on purpose.
            builder = builder
                .with_endpoint(endpoint)
                .with_allow_http(endpoint.starts_with("http://"));
        }
        if let Some(region) = &config.region {
            builder = builder.with_region(region);
        }
        if let Some(id) = &config.access_key_id {
            builder = builder.with_access_key_id(id);
        }
        if let Some(secret) = &config.secret_access_key {
            builder = builder.with_secret_access_key(secret);
        }
        Ok(Storage {
            store: Arc::new(builder.build()?),
            write_chunk: S3_WRITE_CHUNK,
        })
    }

    /// S3 when a bucket is set, else the disk under `data_dir`.
    pub fn configured(
        s3: Option<&S3Config>,
        data_dir: &std::path::Path,
    ) -> anyhow::Result<Storage> {
        match s3 {
            Some(s3) => Storage::s3(s3),
            None => Storage::local(data_dir),
        }
    }

    /// The key of `company`'s bytes with this SHA-256.
    pub fn object_key(company: Uuid, sha256: &str) -> Path {
        Path::from(format!("{company}/{sha256}"))
    }

    /// A writer for a new temporary object; `finish` or `abort` it.
    pub fn temporary(&self) -> (Path, BufWriter) {
        let key = Path::from(format!("tmp/{}", Uuid::now_v7()));
        let writer = BufWriter::with_capacity(self.store.clone(), key.clone(), self.write_chunk);
        (key, writer)
    }

    /// Moves a finished temporary object to its content key, replacing
    /// what is there (the same bytes, by construction).
    pub async fn publish(&self, temporary: &Path, key: &Path) -> object_store::Result<()> {
        self.store.rename(temporary, key).await
    }

    /// Removes an object; one already gone is not an error.
    pub async fn remove(&self, key: &Path) -> object_store::Result<()> {
        match self.store.delete(key).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(err) => Err(err),
        }
    }

    /// Whether an object exists (tests and the sweeper's checks).
    pub async fn exists(&self, key: &Path) -> object_store::Result<bool> {
        match self.store.head(key).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(err) => Err(err),
        }
    }

    /// How many objects hold stored bytes (not counting uploads in flight).
    pub async fn count_objects(&self) -> object_store::Result<usize> {
        let all: Vec<_> = self.store.list(None).try_collect().await?;
        Ok(all
            .iter()
            .filter(|meta| !meta.location.as_ref().starts_with("tmp/"))
            .count())
    }

    /// The bytes of `key` in `range` (end exclusive), or all of them.
    pub async fn read(
        &self,
        key: &Path,
        range: Option<std::ops::Range<u64>>,
    ) -> object_store::Result<Download> {
        let options = GetOptions {
            range: range.map(GetRange::Bounded),
            ..GetOptions::default()
        };
        let result = self.store.get_opts(key, options).await?;
        let body = result.into_stream().map_err(std::io::Error::other).boxed();
        Ok(Download { body })
    }
}

/// Where in S3-compatible storage attachments go. Fields left `None` come
/// from the `AWS_*` environment variables (a deployment sets those; tests
/// set the fields, since parallel tests cannot share process variables).
#[derive(Debug, Clone, Default)]
pub struct S3Config {
    pub bucket: String,
    pub endpoint: Option<String>,
    pub region: Option<String>,
    pub access_key_id: Option<String>,
    pub secret_access_key: Option<String>,
}
