//! Service-level agreements: calendars, policies, their arithmetic and the
//! ticket clocks are the `supportdesk-sla` crate (re-exported here at the
//! paths the service names them by); the routes live here.

pub use ::sla::{apply, cache, calendar, clocks, model, store};
pub mod routes;
