//! Attachments: files streamed to storage (`storage`, `ingest`; a
//! `multipart/form-data` upload bounded as it arrives, `form`) and stored
//! once per company and SHA-256, then named by tickets, comments and chat
//! messages (`store`); downloads through signed, expiring links (`links`).
//! An area crate: it depends on the floors below only.

pub mod form;
pub mod ingest;
pub mod links;
pub mod model;
pub mod storage;
pub mod store;

pub use model::{Attachment, AttachmentRef};
pub use storage::{S3Config, Storage};

// The floors below, at the paths the service names them by (`crate::db`,
// `crate::time`, `crate::auth::Tenant`), so the area's modules read the same
// here as they did in the service; not every area uses every one.
#[allow(unused_imports)]
pub(crate) use ::store::{self as db, on_db};
#[allow(unused_imports)]
pub(crate) use infra::{
    bus, extract, generation, key, metrics, outbox, paging, ratelimit, redis_conn, search,
    snapshots, validate,
};
#[allow(unused_imports)]
pub(crate) use vocab::{decoded_from_text, domain, error, event_catalogue, live, text_enum, time};

pub(crate) mod auth {
    #[allow(unused_imports)]
    pub use infra::key;
    #[allow(unused_imports)]
    pub use vocab::scope::{Scope, ScopeSet};
    #[allow(unused_imports)]
    pub use vocab::tenant::{Mode, Tenant};
}

pub(crate) mod openapi {
    #[allow(unused_imports)]
    pub use infra::schema;
}
