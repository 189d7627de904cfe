//! The change feed: every create, update and delete of tickets, comments,
//! chat sessions, chat messages and knowledge-base articles, in commit
//! order, read with a cursor (`store::read`, which the socket replay reads
//! too). Writes record their entries in the `events` table in their own
//! transaction, so the feed and the webhooks come from one place. An area
//! crate: it depends on the floors below and the event log only.

pub mod model;
pub mod store;

// The floors below, at the paths the service names them by.
infra::area_floors!();

// The areas this one builds on.
pub(crate) use ::events;
