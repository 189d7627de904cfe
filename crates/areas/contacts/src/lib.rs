//! Contacts and organisations: the people the desk talks to (one record
//! per person, with their emails and verified widget identities) and the
//! companies they belong to (`model`, `store`). The contact a new ticket or
//! chat is from is found or created in that record's transaction
//! (`store::matching`), called by the service's sequences; moving tickets
//! and chats on a merge is their areas' own step. An area crate: it depends
//! on the floors below, the event log and the audit log (a person's export
//! requested and downloaded each write their entry).

pub mod model;
pub mod store;

pub use model::{Contact, Organization};

// The floors below, at the paths the service names them by.
infra::area_floors!();

// The areas this one builds on.
pub(crate) use ::audit;
pub(crate) use ::events;
