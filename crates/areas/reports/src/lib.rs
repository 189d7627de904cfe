//! Reports: figures about a tenant's tickets over a period, computed by the
//! database (aggregates, never tickets loaded into memory). An area crate:
//! it reads the tickets', the SLA's and the ratings' tables through their
//! crates' types and depends on nothing above them.

pub mod model;
pub mod store;

pub use model::{ReportQuery, TicketReport};

// The floors below, at the paths the service names them by.
infra::area_floors!();

// The areas this one builds on.
pub(crate) use ::csat;
pub(crate) use ::custom_fields;
pub(crate) use ::sla;
pub(crate) use ::tags;
pub(crate) use ::tickets;
