//! API keys: created once (the value is shown only then), listed without
//! secrets, deactivated or revoked; a personal key holds no more than its
//! agent's role. An area crate: it depends on the floors below, the
//! companies, the roles and the audit log (each change writes its entry).

pub mod store;

pub use store::{ApiKey, NewKey};

// The floors below, at the paths the service names them by.
infra::area_floors!();

// The areas this one builds on.
pub(crate) use ::audit;
pub(crate) use ::companies;
pub(crate) use ::roles;
