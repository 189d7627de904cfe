//! Teams and live routing: teams with members, entities and routing
//! settings (`model`, `store`, `routes`); the atomic claim of queued chats
//! (`claim`); and the drains that assign them and push assignments and
//! queue positions to the sockets (`routing`).

pub mod claim;
pub mod model;
pub mod routes;
pub mod routing;
pub mod store;
