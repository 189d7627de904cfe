//! Satisfaction ratings (CSAT): what a rating is and the rules a submission
//! must pass (`model`), the ratings and the requests for them (`store`), and
//! the signed links in resolution emails (`links`). An area crate: it
//! depends on the floors below, the entities, the event log and the mail
//! queue only.

pub mod links;
pub mod model;
pub mod store;

pub use model::{CsatMode, Rating, RatingTarget};

// The floors below, at the paths the service names them by (`crate::db`,
// `crate::time`, `crate::auth::Tenant`), so the area's modules read the same
// here as they did in the service; not every area uses every one.
#[allow(unused_imports)]
pub(crate) use ::entities;
#[allow(unused_imports)]
pub(crate) use ::events;
#[allow(unused_imports)]
pub(crate) use ::mail;
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
