//! Macros: the model, the store and applying one are the tickets crate's
//! (`tickets::macros`, re-exported here); `/macros` (list, create, get,
//! update, delete) lives here, and applying one to a ticket beside the
//! ticket routes (`tickets::macros`).

pub use ::tickets::macros::{
    Actions, DESCRIPTION_MAX, Macro, NewMacro, PLACEHOLDERS, Set, Visibility, apply, store,
    unknown_placeholders,
};
pub mod routes;
