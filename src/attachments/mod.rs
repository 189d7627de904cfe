//! Attachments: the model, the store, the storage and the link signer are
//! the `supportdesk-attachments` crate (re-exported here at the paths the
//! service names them by). Files uploaded once (`routes`), streamed to storage
//! (`storage`, `ingest`) and stored once per company and SHA-256, then named
//! by tickets, comments and chat messages (`store`). Downloads go through a
//! key or a signed, expiring link (`links`, `files`); the sweeper removes
//! uploads never attached and bytes no upload names any more (`sweep`).

pub mod files;
pub mod routes;
pub mod sweep;
pub mod visitor;

pub use ::attachments::{
    Attachment, AttachmentRef, S3Config, Storage, cleanup, form, ingest, links, model, quota,
    storage, store,
};

use std::time::Duration;

use crate::config::Config;

/// What the attachment routes and the sweeper share: the storage, the link
/// signer and the limits.
#[derive(Debug, Clone)]
pub struct Attachments {
    pub storage: Storage,
    pub links: links::Links,
    /// Largest upload with an API key, in bytes.
    pub max_bytes: u64,
    /// Largest upload with a visitor token, in bytes.
    pub max_visitor_bytes: u64,
    /// How long an upload may stay unattached before the sweeper deletes it.
    pub orphan_age: Duration,
    /// How long a visitor's upload may (shorter: anyone may make one).
    pub visitor_orphan_age: Duration,
    /// What visitors' unattached uploads may hold.
    pub visitor_quota: quota::VisitorQuota,
}

/// The server secret download links are signed with (table
/// `server_secrets`, shared by every node).
const LINK_SECRET: &str = "attachment-links";

impl Attachments {
    /// The signer of links in what is read at `now`.
    pub fn signer(&self, now: crate::time::Timestamp) -> links::Signer {
        links::Signer::new(self.links.clone(), now)
    }

    pub async fn new(
        config: &Config,
        db: &crate::db::Db,
        public_url: std::sync::Arc<str>,
    ) -> anyhow::Result<Attachments> {
        use sha2::Digest;
        let secret = crate::realtime::store::server_secret(db, LINK_SECRET).await?;
        let key: [u8; 32] = sha2::Sha256::digest(secret.as_bytes()).into();
        Ok(Attachments {
            storage: Storage::configured(config.s3.as_ref(), &config.data_dir)?,
            links: links::Links::new(key, public_url),
            max_bytes: config.max_attachment_bytes,
            max_visitor_bytes: config.max_visitor_attachment_bytes,
            orphan_age: config.attachment_orphan_age,
            visitor_orphan_age: config.visitor_orphan_age,
            visitor_quota: quota::VisitorQuota {
                session: config.visitor_session_upload_quota,
                company: config.visitor_company_upload_quota,
            },
        })
    }
}
