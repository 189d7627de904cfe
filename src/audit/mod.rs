//! The audit log: the model and the store are the `supportdesk-audit`
//! crate (re-exported here at the paths the service names them by); the
//! list and its exports (`routes`) and the sealer worker live here.

pub use ::audit::{
    Action, Changes, Entry, Target, TargetType, chain, list, model, prune, record, redact, seal,
    verify,
};
mod export;
pub mod routes;
pub mod sealer;
