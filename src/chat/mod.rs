//! Chat: visitor sessions, their messages, and agent presence. The REST
//! routes and the sockets (`realtime::ws`) share `service`, which commits
//! through `store` and then pushes to the subscribed sockets.

pub mod model;
pub mod routes;
pub mod service;
pub mod store;

pub use model::{Message, Session};
