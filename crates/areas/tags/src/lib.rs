//! Tags on tickets and chat sessions: what a tag is (`model`) and the tag
//! tables that both record kinds share one shape of (`store`). The record
//! areas call the store inside their own transactions, so a tag change
//! commits with the record's timeline and events. An area crate: it depends
//! on the floors below only, so it cannot reach into another area or up
//! into the service.

pub mod model;
pub mod store;

// The floors below, at the paths the service names them by.
infra::area_floors!();
