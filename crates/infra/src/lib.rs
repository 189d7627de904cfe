//! The infrastructure every area of supportdesk shares, above the store and
//! below the areas: request extraction and validation, list paging and
//! search parsing, rate limiting, the Redis connection, metrics, the
//! outbox (durable background jobs: the queue and its worker, which runs
//! the handlers the service registers), and the generation counter of the
//! caches. Nothing here knows a ticket, a chat or
//! any other area: this crate depends on the vocabulary and the store only,
//! so an import of an area does not build.

pub mod bus;
pub mod client_address;
pub mod erasure;
pub mod extract;
pub mod generation;
pub mod key;
pub mod metrics;
pub mod outbox;
pub mod paging;
pub mod ratelimit;
pub mod redis_conn;
pub mod schema;
pub mod sealed;
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

/// The lower crates, for [`area_floors!`] to name from inside an area crate.
#[doc(hidden)]
pub mod floors {
    pub use ::store;
    pub use ::vocab;
}

/// Declares, at an area crate's root, the floors below at the paths the
/// service names them by (`crate::db`, `crate::time`, `crate::auth::Tenant`,
/// `crate::paging`, …), so an area's modules read the same in its crate as
/// in the service, and moving a module between them changes no line of it.
/// Not every area uses every one.
#[macro_export]
macro_rules! area_floors {
    () => {
        #[allow(unused_imports)]
        pub(crate) use $crate::floors::store::{self as db, on_db};
        #[allow(unused_imports)]
        pub(crate) use $crate::floors::vocab::{
            actor, decoded_from_text, domain, error, event_catalogue, live, text_enum, time,
        };
        #[allow(unused_imports)]
        pub(crate) use $crate::{
            bus, erasure, extract, generation, key, metrics, outbox, paging, ratelimit, redis_conn,
            search, snapshots, validate,
        };

        pub(crate) mod auth {
            #[allow(unused_imports)]
            pub use $crate::floors::vocab::scope::{Scope, ScopeSet};
            #[allow(unused_imports)]
            pub use $crate::floors::vocab::tenant::{Mode, Tenant};
            #[allow(unused_imports)]
            pub use $crate::key;
        }

        pub(crate) mod openapi {
            #[allow(unused_imports)]
            pub use $crate::schema;
        }
    };
}
