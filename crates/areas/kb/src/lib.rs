//! Knowledge base: articles and categories of an entity, ranked full-text
//! search on both backends, helpfulness votes, the suggestions kept for a
//! new ticket's agent (`jobs`). An area crate: it depends on the floors
//! below and the event log only.

pub mod jobs;
pub mod model;
pub mod question;
pub mod store;
pub mod text;

// The floors below, at the paths the service names them by.
infra::area_floors!();

// The areas this one builds on.
pub(crate) use ::events;
