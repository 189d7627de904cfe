//! Chat: visitor sessions and their messages (`model`, `store`). Pushing to
//! sockets, routing and the SLA a message meets on a ticket are the
//! service's. An area crate: it depends on the floors below and the
//! components a chat's transaction writes (attachments, custom fields, the
//! event log, mail, the SLA clocks, tags, teams, users) only.

pub mod model;
pub mod store;

pub use model::{Message, Session};

// The floors below, at the paths the service names them by.
infra::area_floors!();

// The areas this one builds on.
#[allow(unused_imports)]
pub(crate) use ::attachments;
#[allow(unused_imports)]
pub(crate) use ::custom_fields;
#[allow(unused_imports)]
pub(crate) use ::events;
#[allow(unused_imports)]
pub(crate) use ::mail;
#[allow(unused_imports)]
pub(crate) use ::sla;
#[allow(unused_imports)]
pub(crate) use ::tags;
#[allow(unused_imports)]
pub(crate) use ::teams;
#[allow(unused_imports)]
pub(crate) use ::users;
