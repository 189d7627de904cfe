//! The audit log: who did what to a company's security and admin records
//! (keys, users, roles, sign-ins, settings, webhooks). The store function
//! that makes such a change writes its entry in the same transaction
//! ([`record::record`]), so no change commits without its entry and a
//! rolled-back change leaves none. Entries are sealed into the company's
//! hash chain after they commit ([`seal`]); [`verify`] walks the chain and
//! [`prune`] drops its start, leaving a checkpoint. Nothing edits or
//! deletes an entry otherwise. An area crate: it depends on the floors
//! below only.

pub mod chain;
pub mod list;
pub mod model;
pub mod prune;
pub mod record;
pub mod redact;
pub mod seal;
pub mod verify;

// The floors below, at the paths the service names them by.
infra::area_floors!();

pub use model::{Action, Changes, Entry, Target, TargetType};
pub use record::{maker_of, record};
