//! The email channel: the model, the store, parsing and sanitising are the
//! `supportdesk-email` crate (re-exported here at the paths the service
//! names them by); `/channels/email` (`routes`) and the providers'
//! inbound webhooks (`webhooks`) are served from here. An incoming message
//! becoming a ticket or a comment is `sequences::email_inbound`; an agent's
//! public reply leaving by email is `sequences::email_outbound`.

pub use ::email::{Channel, InboundKind, compose, loops, model, parse, sanitize, store, trim};
mod bodies;
pub mod imap;
mod providers;
pub mod routes;
pub mod sns;
pub mod webhooks;
