//! settings

pub mod routes;
