//! Agent accounts: how an agent proves who they are (a password hashed with
//! argon2id), the sessions a sign-in opens, and the one-time links that set
//! a password (an invitation, a reset). An area crate above users: the
//! account is the user's; this area owns the sessions and the links.

pub mod hashing;
pub mod password;
pub mod recovery;
pub mod sessions;
pub mod tokens;

// The floors below, at the paths the service names them by.
infra::area_floors!();

// The areas this one builds on.
pub(crate) use ::audit;
pub(crate) use ::companies;
pub(crate) use ::roles;
