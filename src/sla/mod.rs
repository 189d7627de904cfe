//! Service-level agreements: business-hours calendars, SLA policies with
//! targets per priority, and the calendar arithmetic that turns a target
//! of business minutes into an exact due time.

pub mod apply;
pub mod cache;
pub mod calendar;
pub mod clocks;
pub mod model;
pub mod routes;
pub mod store;
