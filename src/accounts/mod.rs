//! Agent accounts: the passwords, sessions and one-time links are the
//! `supportdesk-accounts` crate (re-exported here at the paths the service
//! names them by); sign-in and the other `/api/v1/auth` routes live here.

pub use ::accounts::{hashing, password, recovery, sessions, tokens};
pub use deps::AccountDeps;
pub mod answers;
mod deps;
pub mod end;
pub mod guard;
pub mod keys;
pub mod links;
pub mod routes;
pub mod sign_in;
pub mod signed_in;
pub mod start;
pub mod totp;
