//! Reports: `GET /reports/tickets`, figures about a tenant's tickets over a
//! period, computed by the database (aggregates, never tickets loaded into
//! memory).

pub use ::reports::{ReportQuery, TicketReport, model, store};
pub mod routes;
