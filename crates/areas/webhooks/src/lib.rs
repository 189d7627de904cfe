//! Webhook subscriptions and their signing secrets (`store`, `signing`),
//! and the queueing of an event's deliveries to the subscribed hooks inside
//! the transaction that records it (`dispatch`). The delivery job, the SSRF
//! guard and the routes stay with the service. An area crate: it depends on
//! the floors below only.

pub mod dispatch;
pub mod signing;
pub mod store;

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

/// The outbox job kind that sends one attempt of a delivery.
pub const JOB_KIND: &str = "webhook.delivery";
