//! Companies: the tenants. Active or suspended; shared by both modes.

mod model;
mod standing;
pub mod store;
pub mod suspend;

pub use model::{Company, CompanyStatus};
pub use standing::ensure_active;
