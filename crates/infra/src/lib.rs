//! The infrastructure every area of supportdesk shares, above the store and
//! below the areas: request extraction and validation, list paging and
//! search parsing, rate limiting, the Redis connection, metrics, the
//! outbox (durable background jobs: the queue and its worker, which runs
//! the handlers the service registers), and the generation counter of the
//! caches. Nothing here knows a ticket, a chat or
//! any other area: this crate depends on the vocabulary and the store only,
//! so an import of an area does not build.

pub mod bus;
pub mod extract;
pub mod generation;
pub mod key;
pub mod metrics;
pub mod outbox;
pub mod paging;
pub mod ratelimit;
pub mod redis_conn;
pub mod schema;
pub mod search;
pub mod server_secret;
pub mod snapshots;
pub mod validate;

// The floors below, at the paths the service names them by (`crate::db`,
// `crate::time`, `crate::auth::Tenant`), so these modules read the same
// here as in the service.
pub(crate) use store as db;
pub(crate) use vocab::{domain, error, text_enum, time};

pub(crate) mod auth {
    #[cfg(test)]
    pub use vocab::tenant::Mode;
    pub use vocab::tenant::Tenant;
}
