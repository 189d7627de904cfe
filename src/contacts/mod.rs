//! Contacts and organisations: the model and the store are the
//! `supportdesk-contacts` crate (re-exported here at the paths the service
//! names them by); `/contacts` (`routes`) and `/organizations`
//! (`organizations`) are served from here. Matching a new ticket's or
//! chat's contact and merging two contacts span areas: they are
//! `sequences::contacts`.

pub use ::contacts::{Contact, Organization, model, store};
mod fields;
pub mod organizations;
pub mod routes;
