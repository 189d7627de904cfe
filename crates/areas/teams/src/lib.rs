//! Teams: their members, the entities they serve and how they route chats
//! and tickets (`model`, `store`). Claiming a chat or a ticket for a team,
//! which writes another area's record, is a sequence of the service. An area
//! crate: it depends on the floors below and the audit log (each change
//! writes its entry).

pub mod model;
mod recorded;
pub mod store;

// The floors below, at the paths the service names them by.
infra::area_floors!();

// The areas this one builds on.
pub(crate) use ::audit;
