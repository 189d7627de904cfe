//! Tags on tickets and chat sessions: the model and the store are the
//! `supportdesk-tags` crate (re-exported here at the paths the service names
//! them by); the company's tag list for autocompletion (`routes`) is served
//! from here.

pub use ::tags::{model, store};
pub mod routes;
