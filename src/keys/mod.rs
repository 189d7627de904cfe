//! API keys: created once (the value is shown only then), listed without
//! secrets, deactivated or revoked.

pub mod store;

pub use store::{ApiKey, NewKey};
pub mod routes;
