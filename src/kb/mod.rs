//! Knowledge base: articles and categories of an entity, ranked full-text
//! search on both backends, helpfulness votes.

pub mod model;
pub mod routes;
pub mod store;
pub mod text;
