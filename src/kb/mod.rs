//! Knowledge base: the model, the store and the text handling are the
//! `supportdesk-kb` crate (re-exported here at the paths the service names
//! them by); the routes live here.

pub use ::kb::{jobs, model, question, store, text};
pub mod routes;
