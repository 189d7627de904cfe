//! Chat: visitor sessions and their messages (`model`, `store`), and what
//! their visitor is shown of them (`views`). Pushing to
//! sockets, routing and the SLA a message meets on a ticket are the
//! service's. An area crate: it depends on the floors below and the
//! components a chat's transaction writes (attachments, custom fields, the
//! event log, mail, the SLA clocks, tags, teams) only.

pub mod model;
pub mod store;
pub mod views;

pub use model::{Message, Session};

// The floors below, at the paths the service names them by.
infra::area_floors!();

// The areas this one builds on.
pub(crate) use ::attachments;
pub(crate) use ::custom_fields;
pub(crate) use ::events;
pub(crate) use ::mail;
pub(crate) use ::sla;
pub(crate) use ::tags;
pub(crate) use ::teams;
