//! Tags on tickets and chat sessions: what a tag is (`model`), the tag
//! tables that both record kinds share one shape of (`store`), and the
//! company's tag list for autocompletion (`routes`). The record areas call
//! the store inside their own transactions, so a tag change commits with the
//! record's timeline and events.

pub mod model;
pub mod routes;
pub mod store;
