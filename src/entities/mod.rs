//! Entities: the model and the store are the `supportdesk-entities` crate
//! (re-exported here at the paths the service names them by); the routes
//! live here.

pub use ::entities::{Entity, csat_mode, store};
pub mod routes;
