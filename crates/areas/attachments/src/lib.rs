//! Attachments: files streamed to storage (`storage`, `ingest`; a
//! `multipart/form-data` upload bounded as it arrives, `form`) and stored
//! once per company and SHA-256, then named by tickets, comments and chat
//! messages (`store`), with quotas on what visitors' unattached uploads
//! hold (`quota`); downloads through signed, expiring links (`links`).
//! An area crate: it depends on the floors below only.

pub mod cleanup;
pub mod form;
pub mod ingest;
pub mod links;
pub mod model;
pub mod quota;
pub mod storage;
pub mod store;

pub use model::{Attachment, AttachmentRef};
pub use storage::{S3Config, Storage};

// The floors below, at the paths the service names them by.
infra::area_floors!();
