//! Contacts and organisations: the model and the store are the
//! `supportdesk-contacts` crate (re-exported here at the paths the service
//! names them by); `/contacts` (`routes`) and `/organizations`
//! (`organizations`) are served from here. Matching a new ticket's or
//! chat's contact and merging two contacts span areas: they are
//! `sequences::contacts`. A person's data on request (an export, an
//! erasure) runs as a job (`jobs`) started and read through `requests`.

pub use ::contacts::{Contact, Organization, model, store};
mod fields;
pub mod jobs;
pub mod organizations;
pub mod requests;
pub mod routes;
