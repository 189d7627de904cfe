//! The vocabulary of supportdesk: the words every floor above speaks and
//! none of them owns. Time and ids, the tenant (company and mode), the
//! closed-set mechanism (`text_enum!`) and the value a closed set binds as,
//! the catalogue of event names, the ticket events announced live and
//! their bus topic, a ticket's statuses and priorities, and the two error
//! shapes (the API's and the
//! store's).
//!
//! It is the bottom floor of the workspace: it depends on no other crate of
//! supportdesk, so nothing here can reach up into the store, an area or the
//! wiring; the compiler refuses such an import.

pub mod actor;
pub mod domain;
pub mod error;
pub mod event_catalogue;
pub mod live;
pub mod scope;
pub mod tenant;
pub mod ticket;
pub mod time;
pub mod value;
pub mod visitor;
