//! Chat: visitor sessions and their messages (`model`, `store`). Pushing to
//! sockets, routing and the SLA a message meets on a ticket are the
//! service's. An area crate: it depends on the floors below and the
//! components a chat's transaction writes (attachments, custom fields, the
//! event log, mail, the SLA clocks, tags, teams, users) only.

pub mod model;
pub mod store;

pub use model::{Message, Session};

// The floors below, at the paths the service names them by (`crate::db`,
// `crate::time`, `crate::auth::Tenant`), so the area's modules read the same
// here as they did in the service; not every area uses every one.
#[allow(unused_imports)]
pub(crate) use ::attachments;
#[allow(unused_imports)]
pub(crate) use ::custom_fields;
#[allow(unused_imports)]
pub(crate) use ::events;
#[allow(unused_imports)]
pub(crate) use ::mail;
#[allow(unused_imports)]
pub(crate) use ::sla;
#[allow(unused_imports)]
pub(crate) use ::store::{self as db, on_db};
#[allow(unused_imports)]
pub(crate) use ::tags;
#[allow(unused_imports)]
pub(crate) use ::teams;
#[allow(unused_imports)]
pub(crate) use ::users;
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
