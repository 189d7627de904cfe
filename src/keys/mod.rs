//! API keys: the store is the `supportdesk-keys` crate (re-exported here at
//! the paths the service names it by); the routes live here.

pub use ::keys::{ApiKey, NewKey, store};
pub mod routes;
