//! Automations: the model, the store and the engine are the tickets
//! crate's (`tickets::automations`, re-exported here); `/automations`
//! lives here, and the passes that run them in `sequences::automations`.

pub use ::tickets::automations::*;
pub mod routes;
