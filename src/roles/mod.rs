//! Roles: the model and the store are the `supportdesk-roles` crate
//! (re-exported here at the paths the service names them by); the routes
//! live here.

pub use ::roles::{BuiltInRole, ResolvedRole, Role, RoleRef, model, store};
pub mod routes;
