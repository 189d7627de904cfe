//! Typed custom fields on tickets and chat sessions: the company's
//! definitions (`/settings/custom-fields`), the validation of values against
//! them and the list filters (`model`, pure), and their SQL (`store`). The
//! record areas call the store inside their own transactions, so a value
//! change commits with the record's timeline and events.

pub mod model;
pub mod routes;
pub mod store;
