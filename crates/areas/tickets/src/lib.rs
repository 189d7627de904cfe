//! Tickets: what a ticket is (`model`), its rows, comments, timeline, tags,
//! SLA clocks and escalation (`store`: `store::escalate` is the one way a
//! ticket is escalated, by the API or by an escalation rule), the events it
//! records (`events`, `payloads`) and the escalation rules (`rules`). The
//! routes, the rules' scheduler and the routing of a new ticket to a team
//! are the service's. An area crate: it depends on the floors below and the
//! components a ticket's transaction writes or reads only.

pub mod events;
pub mod model;
pub mod payloads;
pub mod rules;
pub mod store;

pub use model::{Escalation, Ticket};

// The floors below, at the paths the service names them by (`crate::db`,
// `crate::time`, `crate::auth::Tenant`), so the area's modules read the same
// here as they did in the service; not every area uses every one.
#[allow(unused_imports)]
pub(crate) use ::attachments;
#[allow(unused_imports)]
pub(crate) use ::csat;
#[allow(unused_imports)]
pub(crate) use ::custom_fields;
#[allow(unused_imports)]
pub(crate) use ::store::{self as db, on_db};
#[allow(unused_imports)]
pub(crate) use infra::{
    bus, extract, generation, key, metrics, outbox, paging, ratelimit, redis_conn, search,
    snapshots, validate,
};
#[allow(unused_imports)]
pub(crate) use vocab::{decoded_from_text, domain, error, event_catalogue, live, text_enum, time};
// The event log, under a name of its own: `events` is the tickets' own.
pub(crate) use ::events as event_log;
#[allow(unused_imports)]
pub(crate) use ::mail;
#[allow(unused_imports)]
pub(crate) use ::sla;
#[allow(unused_imports)]
pub(crate) use ::tags;
#[allow(unused_imports)]
pub(crate) use ::teams;
#[allow(unused_imports)]
pub(crate) use ::users;
#[allow(unused_imports)]
pub(crate) use ::webhooks;

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
