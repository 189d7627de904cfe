//! Companies: the model, the store and the standing check are the
//! `supportdesk-companies` crate (re-exported here at the paths the service
//! names them by); suspending one, which also closes its sockets, lives here.

pub use ::companies::{Company, CompanyStatus, ensure_active, model, store};
pub mod suspend;
