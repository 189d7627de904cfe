//! Teams and live routing: teams with members, entities and routing
//! settings (`model`, `store`: the `supportdesk-teams` crate, re-exported
//! here at the paths the service names them by; `routes`); the atomic claim
//! of queued chats and tickets (`claim`, which writes the chat's or the
//! ticket's assignment); and the drains that assign them and push
//! assignments and queue positions to the sockets (`routing`).

pub use ::teams::{model, store};
pub mod claim;
pub mod routes;
pub mod routing;
