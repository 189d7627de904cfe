//! The change feed: every create, update and delete of tickets, comments,
//! chat sessions, chat messages and knowledge-base articles, in commit
//! order, read with a cursor (`store::read`, which the socket replay reads
//! too). Writes record their entries in the `events` table in their own
//! transaction, so the feed and the webhooks come from one place. An area
//! crate: it depends on the floors below and the event log only.

pub mod model;
pub mod store;

// The floors below, at the paths the service names them by (`crate::db`,
// `crate::time`, `crate::auth::Tenant`), so the area's modules read the same
// here as they did in the service; not every area uses every one.
#[allow(unused_imports)]
pub(crate) use ::events;
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
