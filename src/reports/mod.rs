//! Reports: `GET /reports/tickets`, figures about a tenant's tickets over a
//! period, computed by the database (aggregates, never tickets loaded into
//! memory).

pub mod model;
pub mod routes;
pub mod store;

pub use model::{ReportQuery, TicketReport};
