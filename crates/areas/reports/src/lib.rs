//! Reports: figures about a tenant's tickets over a period, computed by the
//! database (aggregates, never tickets loaded into memory). An area crate:
//! it reads the tickets', the SLA's and the ratings' tables through their
//! crates' types and depends on nothing above them.

pub mod model;
pub mod store;

pub use model::{ReportQuery, TicketReport};

// The floors below, at the paths the service names them by (`crate::db`,
// `crate::time`, `crate::auth::Tenant`), so the area's modules read the same
// here as they did in the service; not every area uses every one.
#[allow(unused_imports)]
pub(crate) use ::csat;
#[allow(unused_imports)]
pub(crate) use ::custom_fields;
#[allow(unused_imports)]
pub(crate) use ::sla;
#[allow(unused_imports)]
pub(crate) use ::store::{self as db, on_db};
#[allow(unused_imports)]
pub(crate) use ::tags;
#[allow(unused_imports)]
pub(crate) use ::tickets;
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
