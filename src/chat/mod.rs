//! Chat: visitor sessions, their messages, and agent presence. The model and
//! the store are the `supportdesk-chat` crate (re-exported here at the paths
//! the service names them by). The REST routes and the sockets
//! (`realtime::ws`) share `service`, which commits through the store (a
//! message through `sequences::chat_message`) and then pushes to the
//! subscribed sockets.

pub use ::chat::{Message, Session, model, store};
pub use deps::ChatDeps;
pub mod closing;
mod deps;
mod message_routes;
mod presence_routes;
mod reply;
pub mod routes;
pub mod service;
