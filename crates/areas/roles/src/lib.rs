//! Roles: what a signed-in agent may do. Four built-in roles (`owner`,
//! `admin`, `agent`, `viewer`: a closed set with fixed scopes, no rows) and
//! a company's custom roles (named sets of scopes, the `roles` table). A
//! user holds one role (the users area stores which); a session resolves it
//! to scopes with [`store::resolve`]. An area crate: it depends on the
//! floors below and the audit log (each change writes its entry).

pub mod model;
pub mod store;

// The floors below, at the paths the service names them by.
infra::area_floors!();

// The areas this one builds on.
pub(crate) use ::audit;

pub use model::{BuiltInRole, ResolvedRole, RoleRef};
pub use store::Role;
