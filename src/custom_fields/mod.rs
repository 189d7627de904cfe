//! Typed custom fields on tickets and chat sessions: the definitions, the
//! value checks, the list filters and their SQL are the
//! `supportdesk-custom-fields` crate (re-exported here at the paths the
//! service names them by); the company's definitions are served from here
//! (`/settings/custom-fields`).

pub use ::custom_fields::{
    DefinitionCache, TOPIC, definitions, model, new_definition_cache, store,
};
pub mod routes;
