//! Companies: the tenants. Active or suspended; shared by both modes. An
//! area crate: it depends on the floors below and the audit log (a change
//! of status writes its entry).

pub mod model;
pub mod standing;
pub mod store;

// The floors below, at the paths the service names them by.
infra::area_floors!();

// The areas this one builds on.
pub(crate) use ::audit;

pub use model::{Company, CompanyStatus};
pub use standing::ensure_active;
