//! Service-level agreements: business-hours calendars, SLA policies with
//! targets per priority, the calendar arithmetic that turns a target of
//! business minutes into an exact due time, and the clocks of each ticket
//! (`clocks`), which the ticket and chat stores run inside their own
//! transactions. An area crate: it depends on the floors below, the custom
//! fields, the tags and the audit log (a policy or calendar change writes
//! its entry).

pub mod apply;
pub mod cache;
pub mod calendar;
pub mod clocks;
pub mod model;
pub mod store;

// The floors below, at the paths the service names them by.
infra::area_floors!();

// The areas this one builds on.
pub(crate) use ::audit;
pub(crate) use ::custom_fields;
pub(crate) use ::tags;
