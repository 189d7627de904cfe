//! Teams: their members, the entities they serve and how they route chats
//! and tickets (`model`, `store`). Claiming a chat or a ticket for a team,
//! which writes another area's record, is a sequence of the service. An area
//! crate: it depends on the floors below only.

pub mod model;
pub mod store;

// The floors below, at the paths the service names them by.
infra::area_floors!();
