//! Users: the model and the store are the `supportdesk-users` crate
//! (re-exported here at the paths the service names them by); the routes
//! live here.

pub use ::users::{Role, User, credentials, model, store};
pub mod routes;
